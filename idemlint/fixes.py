"""Apply fixes: non-overlapping edits in rounds until nothing more applies (as ruff does).

A round applies every selected fix whose edits do not overlap an earlier one; the file is
then linted again, because one fix can make another possible or stale. A result that no
longer parses is discarded and the file left as it was.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.config import Config
from idemlint.engine import FileResult, check_source
from idemlint.finding import Edit, Finding
from idemlint.rule import Rule

MAX_ROUNDS = 10


@dataclass
class FixOutcome:
    text: str
    applied: int
    findings: tuple[Finding, ...]  # what is left after fixing
    error: str | None = None


def wanted(finding: Finding, unsafe: bool) -> bool:
    return finding.fix is not None and (finding.fix.safe or unsafe)


def apply_once(text: str, findings: Sequence[Finding], unsafe: bool) -> tuple[str, int]:
    accepted: list[Edit] = []
    applied = 0
    for finding in sorted(findings, key=lambda f: (f.line, f.col)):
        if not wanted(finding, unsafe):
            continue
        edits = finding.fix.edits  # type: ignore[union-attr]
        if any(_overlaps(edit, other) for edit in edits for other in accepted):
            continue  # next round
        accepted.extend(edits)
        applied += 1
    for edit in sorted(accepted, key=lambda e: (e.start, e.end), reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text, applied


def _overlaps(a: Edit, b: Edit) -> bool:
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two insertions at one place: order would be arbitrary
    return a.start < b.end and b.start < a.end or a.start == b.start


def fix_source(
    text: str,
    path: str,
    config: Config,
    rules: Sequence[type[Rule]],
    unsafe: bool,
    kind: str | None = None,
    anchor: str | None = None,
    project: ProjectIndex = EMPTY,
) -> FixOutcome:
    """`kind`, `anchor` and `project` as for `check_source`: the file is judged as the run judged it."""
    import libcst as cst

    def check(source: str) -> FileResult:
        return check_source(
            source, path, config, rules, report_unused_noqa=True, kind=kind, project=project, anchor=anchor
        )

    result = check(text)
    applied = 0
    error = None
    for _round in range(MAX_ROUNDS):
        new_text, count = apply_once(text, result.findings, unsafe)
        if count == 0:
            break
        if not _parses(cst, new_text):
            # One bad fix must not block the others: keep those that parse on their own.
            new_text, count = text, 0
            for finding in result.findings:
                candidate, one = apply_once(new_text, [finding], unsafe)
                if one and _parses(cst, candidate):
                    new_text, count = candidate, count + 1
                    break
                if one:
                    error = f"{path}:{finding.line}: {finding.code} fix left out: the result would not parse"
            if count == 0:
                break
        text, applied = new_text, applied + count
        result = check(text)
    return FixOutcome(text, applied, result.findings, error)


def _parses(cst: object, text: str) -> bool:
    try:
        cst.parse_module(text)  # type: ignore[attr-defined]
    except Exception:
        return False
    return True
