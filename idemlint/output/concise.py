"""One line per finding, `path:line:col: CODE message`: the text report without its help lines."""

from __future__ import annotations

from collections.abc import Sequence

from idemlint.finding import Finding
from idemlint.output import PLAIN, ReportContext
from idemlint.output.text import headline


def format_concise(findings: Sequence[Finding], color: bool, context: ReportContext = PLAIN) -> str:
    lines = [headline(f, color) for f in findings]
    return "\n".join(lines) + ("\n" if lines else "")
