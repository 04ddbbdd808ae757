"""IDM800: `# noqa: IDM...` codes that suppress nothing, reported at the comment.

Only codes of rules that ran on the file are judged (a code for an unselected rule, or
another tool's code, may well be needed), and only real comments: a string that shows
`# noqa: IDM001` suppresses nothing, so it is never "unused" either. A comment is judged
over the lines it covers (idemlint.suppression): after the closing quotes of a multi-line
string, it is in use when the finding is on the string's first line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from idemlint.finding import Finding
from idemlint.registry import UNUSED_SUPPRESSION, reserved_finding
from idemlint.rule import Rule
from idemlint.suppression import Comment, find_suppressions


def unused_suppressions(
    path: str,
    suppressions: Mapping[int, frozenset[str] | None],
    findings: list[Finding],
    rules: Sequence[type[Rule]],
    lines: list[str],
) -> list[Finding]:
    """`# noqa: IDM...` codes that matched no finding on the lines they cover, for rules that ran."""
    active = {rule.code for rule in rules}
    comments: tuple[Comment, ...] | None = getattr(suppressions, "comments", None)
    if comments is None:  # a plain mapping: read the comments again
        comments = find_suppressions("\n".join(lines)).comments
    out = []
    for comment in comments:
        if comment.codes is None:
            continue
        found_here = {f.code for f in findings if comment.first <= f.line <= comment.last}
        unused = sorted(
            c
            for c in comment.codes
            if c.startswith("IDM") and c in active and not any(f.startswith(c) for f in found_here)
        )
        if unused:
            out.append(
                reserved_finding(
                    UNUSED_SUPPRESSION,
                    path,
                    comment.line,
                    comment.start,
                    comment.end,
                    f"unused suppression of {', '.join(unused)}: nothing is reported here",
                    "Remove the code from the noqa comment (or the comment).",
                )
            )
    return out
