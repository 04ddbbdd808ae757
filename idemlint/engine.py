"""One file's findings: pre-filter, parse once, run every selected rule, report.

Each file is independent and its result is plain data, so files can be checked in
worker processes and cached. Nothing here raises for a bad file: a file that cannot be
decoded or parsed (idemlint.parsing) becomes one IDM900 finding, and a rule that crashes
is switched off for that file and recorded as an internal error while the other rules'
findings stand. Which rules run on a path is idemlint.per_file's; fixes are resolved to
offsets by idemlint.fix_offsets.
"""

from __future__ import annotations

import hashlib
import traceback
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import TYPE_CHECKING

from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.config import Config
from idemlint.finding import Finding, Related
from idemlint.parsing import FILE_TIME_BUDGET, HELP_LIMIT, Rejected, decode_source, parse_source, within_budget
from idemlint.per_file import rules_for_path
from idemlint.registry import PARSE_ERROR, UNUSED_SUPPRESSION, is_enabled, reserved_finding
from idemlint.rule import Rule
from idemlint.suppression import Suppressions, find_suppressions, is_suppressed, split_lines

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.summaries import Step
    from idemlint.context import FileContext
    from idemlint.rule import Report


@dataclass(frozen=True)
class FileResult:
    path: str
    findings: tuple[Finding, ...] = ()
    errors: tuple[str, ...] = field(default=())  # internal errors: exit code 2
    # False: no rule's words are in the file, so it was never parsed (the summary counts these:
    # a syntax error there goes unreported)
    parsed: bool = True


def check_source(
    source: bytes | str,
    path: str,
    config: Config,
    rules: Sequence[type[Rule]],
    report_unused_noqa: bool = False,
    kind: str | None = None,
    project: ProjectIndex = EMPTY,
    anchor: str | None = None,
) -> FileResult:
    """All findings for one file's contents. Never raises for bad input. `anchor` is the
    path relative to the project root (per-file-ignores and fingerprints use it, so they do
    not depend on the folder idemlint runs from); `path` is what findings show."""
    result = within_budget(
        lambda: _check_source(source, path, config, rules, report_unused_noqa, kind, project, anchor),
        FILE_TIME_BUDGET,
    )
    return _rejected(path, result, config) if isinstance(result, Rejected) else result


def _check_source(
    source: bytes | str,
    path: str,
    config: Config,
    rules: Sequence[type[Rule]],
    report_unused_noqa: bool,
    kind: str | None,
    project: ProjectIndex,
    anchor: str | None,
) -> FileResult:
    rules = rules_for_path(rules, anchor or path, config, kind)
    text = decode_source(source)
    if isinstance(text, Rejected):
        return _rejected(path, text, config)
    lowered = text.lower()
    wanted = [rule for rule in rules if rule.wanted(lowered, config, project)]
    suppressions = find_suppressions(text)
    if not wanted:  # the pre-filter: no rule can report here, and libcst is never loaded
        unused = _unused_suppressions(path, suppressions, [], rules, text, config) if report_unused_noqa else []
        return FileResult(path, tuple(sorted(unused)), parsed=False)
    ctx = parse_source(text, path, config, project)
    if isinstance(ctx, Rejected):
        return _rejected(path, ctx, config)
    if not config.check_tests and _supports_tests(ctx, anchor or path):
        return FileResult(path)  # model factories, fixtures: test code by what it defines, skipped as tests are

    errors: list[str] = []
    reports: list[tuple[type[Rule], Report]] = []
    for rule in wanted:
        try:
            reports.extend((rule, report) for report in rule().check(ctx))
        except Exception as error:
            where = traceback.extract_tb(error.__traceback__)[-1]
            errors.append(
                f"{path}: internal error in {rule.code} ({rule.name}): {type(error).__name__}: {error} "
                f"[{where.filename}:{where.lineno}]"
            )
    built = _findings(ctx, reports, anchor or path) if reports else ([], [])
    if isinstance(built, Rejected):
        return _rejected(path, built, config)
    findings = _dedupe(built[0])
    kept = [f for f in findings if not is_suppressed(suppressions, f.line, f.code)]
    if report_unused_noqa:
        kept.extend(_unused_suppressions(path, suppressions, [*findings, *built[1]], rules, text, config))
    return FileResult(path, tuple(sorted(kept)), tuple(errors))


def _supports_tests(ctx: FileContext, anchor: str) -> bool:
    """A module whose code, not its path, says it is test support (`analysis/programs.py`)."""
    from idemlint.analysis.programs import supports_tests
    from idemlint.paths import role_of

    return role_of(anchor) == "source" and supports_tests(ctx.model)


def _unused_suppressions(
    path: str,
    suppressions: Suppressions,
    findings: list[Finding],
    rules: Sequence[type[Rule]],
    text: str,
    config: Config,
) -> list[Finding]:
    """IDM800 findings, when it is selected and the file has suppressions at all."""
    if not suppressions or not is_enabled(UNUSED_SUPPRESSION, config.selected, config.ignored):
        return []
    from idemlint.unused_noqa import unused_suppressions

    return unused_suppressions(path, suppressions, findings, rules, split_lines(text))


def _findings(
    ctx: FileContext, reports: list[tuple[type[Rule], Report]], anchor: str
) -> tuple[list[Finding], list[Finding]] | Rejected:
    """Reports to findings: positions are resolved only here, for files that have reports.
    Those in a definition a later one of the same name replaces come second: that copy never
    runs, so they are not reported, but a suppression of one is not unused."""
    from idemlint import stakes
    from idemlint.analysis.programs import file_role
    from idemlint.analysis.shadowed import shadowed_definitions
    from idemlint.calibration import IN_FUNCTION, THROUGH_PROJECT, calibrated
    from idemlint.fix_offsets import line_starts, resolve_fix
    from idemlint.parsing import positions as resolve_positions

    try:
        positions = resolve_positions(ctx.module)
    except RecursionError:
        return Rejected("too deeply nested to locate findings", help=HELP_LIMIT)
    lines = split_lines(ctx.source)
    starts: list[int] = []  # line offsets, computed once per file (per fix, it was quadratic)
    role = file_role(ctx.model, anchor)
    dead = shadowed_definitions(ctx.model)
    unreached = ctx.project.unreached if ctx.indexed else frozenset()
    findings: list[Finding] = []
    replaced: list[Finding] = []
    for rule, report in reports:
        span = positions.get(report.node)
        if span is None:
            continue
        into = replaced if dead and any(ctx.model.is_inside(report.node, d) for d in dead) else findings
        line, col, end_line, end_col = span
        message = report.message
        if report.lines:
            message = Template(message).safe_substitute({k: positions.get(n, (0,))[0] for k, n in report.lines})
        if report.fix and not starts:
            starts.extend(line_starts(ctx.source))
        evidence = report.evidence or (THROUGH_PROJECT if report.related else IN_FUNCTION)
        reported = (*lines[line - 1 : max(line, end_line)], *(step.text for step in report.related))
        unnamed = _unreached_definition(ctx, report.node, unreached) if unreached else None
        if unnamed:
            message += f" (nothing in this project calls or names {unnamed})"
        into.append(
            Finding(
                path=ctx.path,
                line=line,
                col=col,
                end_line=end_line,
                end_col=end_col,
                code=rule.code,
                name=rule.name,
                message=message,
                suggestion=report.suggestion or rule.fix_hint,
                fix=resolve_fix(report.fix, positions, ctx.source, lines, starts) if report.fix else None,
                severity=rule.severity,
                confidence=calibrated(rule.code, evidence, role, rule.confidence, report.confidence),
                fingerprint=fingerprint(
                    rule.code,
                    anchor,
                    lines[line - 1] if line <= len(lines) else "",
                    _function_name(ctx, report.node),
                ),
                related=tuple(_related(step, positions, anchor) for step in report.related),
                evidence=evidence,
                role=role,
                stakes=stakes.of_report(ctx, rule, report, reported),
            )
        )
    return findings, replaced


def _related(step: Step, positions: Mapping[cst.CSTNode, tuple[int, int, int, int]], anchor: str) -> Related:
    """A step of a finding's chain: in this file (its node's line) or in another (path and line
    from the project index); paths are relative to the project root."""
    if step.node is not None:
        return Related(anchor, positions.get(step.node, (0, 0, 0, 0))[0], step.text)
    return Related(step.path, step.line, step.text)


def fingerprint(code: str, path: str, line_text: str, function: str) -> str:
    normalised = " ".join(line_text.split())
    return hashlib.sha256(f"{code}\0{path}\0{function}\0{normalised}".encode()).hexdigest()[:20]


def _unreached_definition(ctx: FileContext, node: cst.CSTNode, unreached: frozenset[str]) -> str | None:
    """The short name of the outermost definition holding `node` that nothing in the project
    names (`analysis/unreached.py`), if there is one."""
    import libcst as cst

    dotted = ctx.module_name
    for owner in reversed([a for a in ctx.model.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.ClassDef))]):
        dotted = f"{dotted}.{owner.name.value}"
        if dotted in unreached:
            return owner.name.value
    return None


def _function_name(ctx: FileContext, node: cst.CSTNode) -> str:
    import libcst as cst

    names = [a.name.value for a in ctx.model.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.ClassDef))]
    return ".".join(reversed(names))


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[int, int, str]] = set()
    out = []
    for finding in sorted(findings):
        key = (finding.line, finding.col, finding.code)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out


def _rejected(path: str, problem: Rejected, config: Config) -> FileResult:
    """IDM900 for a file that was not analysed. It is on whatever `select` says (a file that
    could not be checked must never look clean) and off only when `ignore` names it."""
    if any(PARSE_ERROR.startswith(pattern.upper()) for pattern in config.ignored):
        return FileResult(path)
    line, col = max(problem.line, 1), max(problem.col, 1)
    finding = reserved_finding(PARSE_ERROR, path, line, col, col, problem.message, problem.help)
    return FileResult(path, (finding,))
