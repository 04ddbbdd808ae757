"""IDM800: `# noqa: IDM...` codes that suppress nothing, reported at the comment.

Only codes of rules that ran on the file are judged (a code for an unselected rule, or
another tool's code, may well be needed), and only real comments: a docstring that shows
`# noqa: IDM001` suppresses as flake8 does but is never "unused".
"""

from __future__ import annotations

from collections.abc import Sequence

from idemlint.finding import Finding
from idemlint.registry import UNUSED_SUPPRESSION, reserved_finding
from idemlint.rule import Rule
from idemlint.suppression import comment_span, real_comment_lines


def unused_suppressions(
    path: str,
    suppressions: dict[int, frozenset[str] | None],
    findings: list[Finding],
    rules: Sequence[type[Rule]],
    lines: list[str],
) -> list[Finding]:
    """`# noqa: IDM...` codes that matched no finding on their line, for rules that ran."""
    active = {rule.code for rule in rules}
    unused_by_line: dict[int, list[str]] = {}
    for line, codes in sorted(suppressions.items()):
        if codes is None:
            continue
        found_here = {f.code for f in findings if f.line == line}
        unused = sorted(
            c for c in codes if c.startswith("IDM") and c in active and not any(f.startswith(c) for f in found_here)
        )
        if unused:
            unused_by_line[line] = unused
    if not unused_by_line:
        return []  # the usual case (other tools' codes, or codes in use): no need to tokenize
    out = []
    comments = real_comment_lines("".join(line + "\n" for line in lines), set(unused_by_line))
    for line, unused in unused_by_line.items():
        if line in comments:
            start, end = comment_span(lines[line - 1] if line <= len(lines) else "")
            out.append(
                reserved_finding(
                    UNUSED_SUPPRESSION,
                    path,
                    line,
                    start,
                    end,
                    f"unused suppression of {', '.join(unused)}: nothing is reported here",
                    "Remove the code from the noqa comment (or the comment).",
                )
            )
    return out
