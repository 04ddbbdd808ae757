"""`idemlint audit`: every side-effecting external call, and whether it is safe to retry.

One row per call site (library and call, target, whether a key is sent and how it is
made, what retries it, what a timeout does), then a summary by library and target: the
list a team adopting idempotency keys walks through first. It reuses the rules' analysis:
the same side-effect recognition as IDM301, retry contexts, key sinks, and IDM302's
reading of timeout handlers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.config import Config
from idemlint.reading import read_source

if TYPE_CHECKING:
    from idemlint.cache import ResultCache


@dataclass(frozen=True)
class KeyStatus:
    """The idempotency key the call sends, if any."""

    # "sent", "not sent", "unknown", or a key a retry cannot reuse: "regenerated per attempt",
    # "clock-derived", "content hash" (with the rule that reports it)
    status: str
    rule: str | None = None  # IDM001 / IDM002 / IDM003
    detail: str | None = None  # why the status is unknown

    def __str__(self) -> str:
        extra = self.rule or self.detail
        return f"{self.status} ({extra})" if extra else self.status


@dataclass(frozen=True)
class RetriedBy:
    """What retries the call."""

    kind: str  # "retry loop", "@tenacity.retry", "Celery task with autoretry_for", "urllib3 Retry adapter"...
    line: int | None = None  # where the retry is set up
    note: str | None = None  # a condition or consequence: "if mounted for this call"

    def __str__(self) -> str:
        text = f"{self.kind} (line {self.line})" if self.line else self.kind
        return f"{text}, {self.note}" if self.note else text


@dataclass(frozen=True)
class TimeoutHandling:
    """What the code around the call does when it times out."""

    handling: str  # "not handled", "caught", "treated as failure"
    rule: str | None = None  # IDM302 when treated as failure
    detail: str | None = None  # how: "state set to 'failed'"

    def __str__(self) -> str:
        if self.rule:
            return f"{self.handling} ({self.rule}: {self.detail})" if self.detail else f"{self.handling} ({self.rule})"
        return f"{self.handling}; {self.detail}" if self.detail else self.handling


@dataclass(frozen=True)
class AuditRow:
    path: str
    line: int
    library: str  # "in-house" for a call to a project function that calls another system
    call: str
    method: str
    target: str
    key: KeyStatus
    retried: RetriedBy | None  # None: nothing retries it
    timeout: TimeoutHandling
    # for an in-house row: where the external call it reaches is made ("shop/client.py:27")
    reaches: str | None = None

    def __post_init__(self) -> None:
        """Every text field may hold the repository's words (and a row may come back from a
        cache folder someone else wrote): one printable line each, its parts' too."""
        _printable_fields(self)
        for part in (self.key, self.retried, self.timeout):
            if part is not None:
                _printable_fields(part)

    @property
    def unkeyed(self) -> bool:
        """No key seen: none is sent, or whether one is cannot be told."""
        return self.key.status in ("not sent", "unknown")

    @property
    def bad_key(self) -> bool:
        """A key is sent, but a retry cannot reuse it (IDM001-IDM003)."""
        return self.key.rule is not None

    @property
    def unsafe(self) -> bool:
        """What a retry of this call would repeat: it has no key, or a key that changes."""
        return self.unkeyed or self.bad_key


def _printable_fields(record: object) -> None:
    """Make each text field of a frozen dataclass printable, in place (at construction)."""
    from dataclasses import fields

    from idemlint.printable import printable

    for field in fields(record):  # type: ignore[arg-type]
        value = getattr(record, field.name)
        if isinstance(value, str):
            object.__setattr__(record, field.name, printable(value))


def _order(row: AuditRow) -> tuple[object, ...]:
    return (row.path, row.line, row.library, row.call, row.method, row.target, str(row.key))


def audit_source(
    source: bytes | str, path: str, config: Config, project: ProjectIndex = EMPTY, relative: str = ""
) -> list[AuditRow]:
    """Rows for one file; a file that cannot be parsed or has no external call gives none.
    The file is parsed and bounded in time exactly as `idemlint check` parses it. With the
    project index, a retried call to a project function that calls another system is a row
    too ("in-house"), which says where the external call it reaches is made (`relative` is
    this file's path from the project root, as the index names files)."""
    from idemlint.parsing import FILE_TIME_BUDGET, Rejected, within_budget

    rows = within_budget(lambda: _audit(source, path, config, project, relative or path), FILE_TIME_BUDGET)
    return [] if isinstance(rows, Rejected) else rows


def _audit(source: bytes | str, path: str, config: Config, project: ProjectIndex, relative: str) -> list[AuditRow]:
    from idemlint.parsing import Rejected, parse_source, positions

    ctx = parse_source(source, path, config, project)
    if isinstance(ctx, Rejected):
        return []
    effects = ctx.effects.effects
    wrapped = _wrapper_calls(ctx)
    if not effects and not wrapped:
        return []
    key_problems = _key_problems(ctx)
    located = positions(ctx.module)
    rows = [_in_house_row(ctx, call, callee, located, path, relative) for call, callee in wrapped]
    for effect in effects:
        line = located.get(effect.call, (0,))[0]
        rows.append(
            AuditRow(
                path=path,
                line=line,
                library=effect.library,
                call=effect.operation,
                method=effect.method or "",
                target=(effect.target or "?")[:80],
                key=_key_status(ctx, effect, key_problems),
                retried=_retried_by(ctx, effect.call, located, effect.library),
                timeout=_timeout_handling(ctx, effect.call),
            )
        )
    return sorted(rows, key=_order)


def _wrapper_calls(ctx):  # type: ignore[no-untyped-def]
    """Calls in a retry context to project functions that call another system."""
    from idemlint.analysis.summaries import passed_arguments

    found = []
    for call in ctx.model.calls:
        if call in ctx.effects.by_call or ctx.retry.context_of(call) is None:
            continue
        callee = ctx.callee(call)
        if callee is not None and callee.summary.effect_for(passed_arguments(call)):
            found.append((call, callee))
    return found


def _in_house_row(ctx, call, callee, located, path: str, relative: str) -> AuditRow:  # type: ignore[no-untyped-def]
    from idemlint.analysis.summaries import passed_arguments

    summary = callee.summary
    passed = passed_arguments(call)
    unkeyed, operation = summary.unkeyed_effect_for(passed)
    chain = unkeyed or summary.effect_for(passed)
    assert chain is not None  # `_wrapper_calls` keeps only calls that reach an effect
    origin = chain[-1]
    where = f"{origin.path}:{origin.line}" if origin.path else f"{relative}:{located.get(origin.node, (0,))[0]}"
    if summary.sends_key and not summary.supplied_by(call):
        key = KeyStatus("regenerated per attempt", rule="IDM001")
    elif unkeyed is not None:
        key = KeyStatus("not sent")
    else:
        key = KeyStatus("unknown", detail=f"inside {callee.name}()")
    method, _forwarded = summary.verb_binding(passed)
    return AuditRow(
        path=path,
        line=located.get(call, (0,))[0],
        library="in-house",
        call=f"{callee.name}()",
        method=method,
        target=f"{operation or origin.text.removesuffix('()')}()",
        key=key,
        retried=_retried_by(ctx, call, located),
        timeout=_timeout_handling(ctx, call),
        reaches=where,
    )


def _key_problems(ctx: object) -> dict[object, KeyStatus]:
    """Key-generating calls that IDM001-003 report, by node, with the problem's name."""
    from idemlint.rules.keys import ClockInKey, ContentHashKey, KeyRegeneratedPerAttempt

    names = {
        KeyRegeneratedPerAttempt: "regenerated per attempt",
        ClockInKey: "clock-derived",
        ContentHashKey: "content hash",
    }
    found: dict[object, KeyStatus] = {}
    for rule, label in names.items():
        for report in rule().check(ctx):  # type: ignore[arg-type]
            found.setdefault(report.node, KeyStatus(label, rule=rule.code))
    return found


def _key_status(ctx, effect, key_problems) -> KeyStatus:  # type: ignore[no-untyped-def]
    from idemlint.analysis.flow import origin_calls

    model = ctx.model
    for sink in ctx.sinks.sinks:
        if sink.call is effect.call or model.is_inside(sink.value, effect.call):
            for call in origin_calls(model, sink.value):
                if call in key_problems:
                    return key_problems[call]
    if effect.keyed:
        return KeyStatus("sent")
    return KeyStatus("not sent") if effect.keyed is False else KeyStatus("unknown", detail="headers built elsewhere")


def _retried_by(ctx, call, positions, library: str = "") -> RetriedBy | None:  # type: ignore[no-untyped-def]
    import libcst as cst

    from idemlint.knowledge.http import URLLIB3_BACKED
    from idemlint.knowledge.sdks import SELF_RETRYING_SDKS

    def line_of(node: object) -> int | None:
        return positions.get(node, (None,))[0]

    model = ctx.model
    context = ctx.retry.context_of(call)
    if context is not None:
        return RetriedBy(context.label, line_of(context.anchor))
    if library in URLLIB3_BACKED:
        for policy in ctx.policies.policies:
            if policy.context is None:  # a urllib3 Retry(...) object in this file
                return RetriedBy("urllib3 Retry adapter", line_of(policy.anchor), "if mounted for this call")
    for sdk, (setting, client, keyword) in SELF_RETRYING_SDKS.items():
        label, note = setting.replace(".", " "), f"with {sdk}'s own idempotency keys"
        if library == sdk:
            for target, _value, _statement in model.attribute_assigns:
                if model.dotted(target) == setting:
                    return RetriedBy(label, line_of(target), note)
        for call in model.calls:
            if model.call_name(call) == client and any(
                isinstance(a.keyword, cst.Name) and a.keyword.value == keyword for a in call.args
            ):
                return RetriedBy(label, line_of(call), note)
    return None


def _timeout_handling(ctx, call) -> TimeoutHandling:  # type: ignore[no-untyped-def]
    import libcst as cst

    from idemlint.analysis.effects import records_failure, timeout_caught

    model = ctx.model
    for ancestor in model.ancestors(call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            break
        if isinstance(ancestor, (cst.Try, cst.TryStar)) and model.is_inside(call, ancestor.body):
            for handler in ancestor.handlers:
                if timeout_caught(model, handler) is None:
                    continue
                failure = records_failure(model, handler)
                if failure:
                    return TimeoutHandling("treated as failure", rule="IDM302", detail=failure)
                return TimeoutHandling("caught", detail="outcome not declared a failure")
    return TimeoutHandling("not handled")


# -- reports ---------------------------------------------------------------------------------------


def _open_cache(directory: Path, config: Config, project: ProjectIndex) -> ResultCache[AuditRow]:
    """The audit's own cache file, keyed like `check`'s: version, configuration, the project
    index's structure and the shape of a row; each entry on the project functions it names."""
    import hashlib
    from dataclasses import fields

    from idemlint import __version__
    from idemlint.cache import ResultCache

    shape = repr(
        [(cls.__name__, [f.name for f in fields(cls)]) for cls in (AuditRow, KeyStatus, RetriedBy, TimeoutHandling)]
    )
    salt = hashlib.sha256(
        f"{__version__}\0audit\0{config.fingerprint()}\0{project.structure_digest}\0{shape}".encode()
    ).hexdigest()
    return ResultCache(directory, salt, project.function_digests, item=AuditRow, kind="audit")


def audit_paths(
    files: Sequence[tuple[Path, str]],
    config: Config,
    project: ProjectIndex = EMPTY,
    cache_dir: Path | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[list[AuditRow], list[str]]:
    """Rows for every file. An external call that nothing in its own file retries, but that an
    in-house row reaches from a retry elsewhere, is marked retried by that caller. With
    `cache_dir`, a file unchanged since the last audit (and the project functions it names)
    gives its stored rows; `progress(done, total)` is told after each file."""
    from idemlint.cache import content_hash, depended_on, file_key

    rows: list[AuditRow] = []
    errors = []
    relative: dict[str, str] = {}
    root = config.root.resolve()
    cache = _open_cache(cache_dir, config, project) if cache_dir is not None else None
    tick = progress or (lambda done, total: None)
    for done, (real, shown) in enumerate(files, 1):
        tick(done, len(files))
        try:
            relative[shown] = real.resolve().relative_to(root).as_posix()
        except ValueError:
            relative[shown] = shown
        key = file_key(real, shown, None, relative[shown])
        try:
            stored, source, now, digest = cache.lookup(key, real) if cache is not None else (None, None, None, b"")
            if stored is not None:
                rows.extend(stored)
                continue
            source = source if source is not None else read_source(real)
        except OSError as error:
            errors.append(f"{shown}: cannot read: {error.strerror or error}")
            continue
        found = audit_source(source, shown, config, project, relative[shown])
        if cache is not None:
            cache.put(key, now, digest or content_hash(source), found, depended_on(source, cache.functions))
        rows.extend(found)
    tick(-1, len(files))
    if cache is not None:
        cache.save()
    callers: dict[str, AuditRow] = {}
    for row in sorted(rows, key=_order):
        if row.reaches and row.retried is not None:
            callers.setdefault(row.reaches, row)  # the first, in file and line order
    marked = []
    for row in rows:
        caller = callers.get(f"{relative.get(row.path, row.path)}:{row.line}") if row.library != "in-house" else None
        if row.retried is None and caller is not None and caller.retried is not None:
            note = f"through {caller.call} at {caller.path}:{caller.line}"
            row = replace(row, retried=RetriedBy(f"{caller.retried.kind} in another function", None, note))
        marked.append(row)
    return sorted(marked, key=_order), errors
