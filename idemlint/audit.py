"""`idemlint audit`: every side-effecting external call, and whether it is safe to retry.

One row per call site (library and call, target, whether a key is sent and how it is
made, what retries it, what a timeout does), then a summary by library and target: the
list a team adopting idempotency keys walks through first. It reuses the rules' analysis:
the same side-effect recognition as IDM301, retry contexts, key sinks, and IDM302's
reading of timeout handlers.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

from idemlint.config import Config


@dataclass(frozen=True, order=True)
class AuditRow:
    path: str
    line: int
    library: str
    call: str
    method: str
    target: str
    key: str  # sent / not sent / unknown / regenerated per attempt (IDM001) / ...
    retried: str  # no / what retries it
    timeout: str  # not handled / treated as failure (IDM302) / handled without declaring failure


def audit_source(source: bytes | str, path: str, config: Config) -> list[AuditRow]:
    """Rows for one file; a file that cannot be parsed or has no external call gives none."""
    import libcst as cst

    from idemlint.context import FileContext
    from idemlint.engine import _complexity_problem, _positions, decode

    try:
        text = decode(source) if isinstance(source, bytes) else source
    except (SyntaxError, UnicodeDecodeError, LookupError):
        return []
    if "\x00" in text or _complexity_problem(text) is not None:
        return []
    try:
        module = cst.parse_module(text)
    except Exception:
        return []
    ctx = FileContext(path, text, module, config)
    effects = ctx.effects.effects
    if not effects:
        return []
    key_problems = _key_problems(ctx)
    positions = _positions(module)
    rows = []
    for effect in effects:
        line = positions.get(effect.call, (0,))[0]
        rows.append(
            AuditRow(
                path=path,
                line=line,
                library=effect.library,
                call=effect.operation,
                method=effect.method or "",
                target=(effect.target or "?")[:80],
                key=_key_status(ctx, effect, key_problems),
                retried=_retried_by(ctx, effect, positions),
                timeout=_timeout_handling(ctx, effect),
            )
        )
    return sorted(rows)


def _key_problems(ctx: object) -> dict[object, str]:
    """Key-generating calls that IDM001-003 report, by node, with the problem's name."""
    from idemlint.rules.keys import ClockInKey, ContentHashKey, KeyRegeneratedPerAttempt

    names = {
        KeyRegeneratedPerAttempt: "regenerated per attempt (IDM001)",
        ClockInKey: "clock-derived (IDM002)",
        ContentHashKey: "content hash (IDM003)",
    }
    found: dict[object, str] = {}
    for rule, label in names.items():
        for report in rule().check(ctx):  # type: ignore[arg-type]
            found.setdefault(report.node, label)
    return found


def _key_status(ctx, effect, key_problems) -> str:  # type: ignore[no-untyped-def]
    from idemlint.analysis.flow import origin_calls

    model = ctx.model
    for sink in ctx.sinks.sinks:
        if sink.call is effect.call or model.is_inside(sink.value, effect.call):
            for call in origin_calls(model, sink.value):
                if call in key_problems:
                    return key_problems[call]
    if effect.keyed:
        return "sent"
    return "not sent" if effect.keyed is False else "unknown (headers built elsewhere)"


def _retried_by(ctx, effect, positions) -> str:  # type: ignore[no-untyped-def]
    import libcst as cst

    model = ctx.model
    context = ctx.retry.context_of(effect.call)
    if context is not None:
        return f"{context.label} (line {positions.get(context.anchor, (0,))[0]})"
    if effect.library in ("requests", "urllib3", "http"):
        for policy in ctx.policies.policies:
            if policy.context is None:  # a urllib3 Retry(...) object in this file
                return f"urllib3 Retry adapter (line {positions.get(policy.anchor, (0,))[0]}), if mounted for this call"
    if effect.library == "stripe":
        for target, _value, _statement in model.attribute_assigns:
            if model.dotted(target) == "stripe.max_network_retries":
                return "stripe max_network_retries (stripe sends its own keys on those retries)"
    for call in model.calls:
        if model.call_name(call) == "stripe.StripeClient" and any(
            isinstance(a.keyword, cst.Name) and a.keyword.value == "max_network_retries" for a in call.args
        ):
            return "stripe max_network_retries (stripe sends its own keys on those retries)"
    return "no"


def _timeout_handling(ctx, effect) -> str:  # type: ignore[no-untyped-def]
    import libcst as cst

    from idemlint.analysis.effects import records_failure, timeout_caught

    model = ctx.model
    for ancestor in model.ancestors(effect.call):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            break
        if isinstance(ancestor, (cst.Try, cst.TryStar)) and model.is_inside(effect.call, ancestor.body):
            for handler in ancestor.handlers:
                if timeout_caught(model, handler) is None:
                    continue
                failure = records_failure(model, handler)
                if failure:
                    return f"treated as failure (IDM302: {failure})"
                return "caught; outcome not declared a failure"
    return "not handled"


# -- reports ---------------------------------------------------------------------------------------


def target_base(target: str) -> str:
    if "://" in target:
        parts = urlsplit(target)
        return f"{parts.scheme}://{parts.netloc}"
    return target.split("/")[0] if target.startswith("{") or "/" in target else target


def summary(rows: Sequence[AuditRow]) -> list[dict[str, object]]:
    groups: dict[tuple[str, str], dict[str, object]] = {}
    for row in rows:
        key = (row.library, target_base(row.target))
        group = groups.setdefault(
            key, {"library": key[0], "target": key[1], "sites": 0, "unkeyed": 0, "unkeyed_and_retried": 0}
        )
        group["sites"] += 1  # type: ignore[operator]
        if row.key != "sent":
            group["unkeyed"] += 1  # type: ignore[operator]
            if row.retried != "no":
                group["unkeyed_and_retried"] += 1  # type: ignore[operator]
    return sorted(groups.values(), key=lambda g: (-g["unkeyed_and_retried"], -g["unkeyed"], g["library"], g["target"]))  # type: ignore[operator]


COLUMNS = ("location", "library", "call", "target", "key", "retried", "timeout")


def _cells(row: AuditRow) -> tuple[str, ...]:
    call = f"{row.method} {row.call}" if row.method else row.call
    return (f"{row.path}:{row.line}", row.library, call, row.target, row.key, row.retried, row.timeout)


def format_markdown(rows: Sequence[AuditRow]) -> str:
    def escape(cell: str) -> str:
        return cell.replace("|", "\\|").replace("\n", " ")

    lines = [
        "# External side effects",
        "",
        "Unkeyed: no idempotency key, or one a retry cannot reuse (regenerated, clock- or hash-derived).",
        "",
        "| library | target | sites | unkeyed | unkeyed and retried |",
        "| --- | --- | --- | --- | --- |",
    ]
    for group in summary(rows):
        lines.append(
            f"| {group['library']} | {escape(str(group['target']))} | {group['sites']} | {group['unkeyed']} | {group['unkeyed_and_retried']} |"
        )
    lines += ["", "| " + " | ".join(COLUMNS) + " |", "| " + " | ".join("---" for _ in COLUMNS) + " |"]
    lines += ["| " + " | ".join(escape(c) for c in _cells(row)) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def format_json(rows: Sequence[AuditRow]) -> str:
    return json.dumps({"summary": summary(rows), "sites": [asdict(r) for r in rows]}, indent=2) + "\n"


def format_text(rows: Sequence[AuditRow], color: bool) -> str:
    bold, red, reset = ("\x1b[1m", "\x1b[31m", "\x1b[0m") if color else ("", "", "")
    out = [f"{bold}External side effects by library and target{reset}"]
    for group in summary(rows):
        risky = group["unkeyed_and_retried"]
        mark = f"{red}{risky} unkeyed and retried{reset}" if risky else "0 unkeyed and retried"
        out.append(
            f"  {group['library']:<10} {str(group['target'])[:50]:<50} {group['sites']:>3} sites, {group['unkeyed']} unkeyed, {mark}"
        )
    out.append("")
    for row in rows:
        location, library, call, target, key, retried, timeout = _cells(row)
        highlight = red if key != "sent" and retried != "no" else ""
        out.append(f"{bold}{location}{reset}  {call}  ->  {target}")
        out.append(f"    key: {highlight}{key}{reset if highlight else ''}; retried: {retried}; timeout: {timeout}")
    return "\n".join(out) + "\n"


FORMATS = {"text": format_text, "json": format_json, "markdown": format_markdown}


def audit_paths(files: Sequence[tuple[Path, str]], config: Config) -> tuple[list[AuditRow], list[str]]:
    rows: list[AuditRow] = []
    errors = []
    for real, shown in files:
        try:
            source = real.read_bytes()
        except OSError as error:
            errors.append(f"{shown}: cannot read: {error.strerror or error}")
            continue
        rows.extend(audit_source(source, shown, config))
    return sorted(rows), errors
