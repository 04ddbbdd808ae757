"""Pylint's parseable format, as ruff writes it: `path:line: [CODE] message`, one line each."""

from __future__ import annotations

from collections.abc import Sequence

from idemlint.finding import Finding
from idemlint.output import PLAIN, ReportContext


def format_pylint(findings: Sequence[Finding], color: bool, context: ReportContext = PLAIN) -> str:
    lines = [f"{f.path}:{f.line}: [{f.code}] {f.message}" for f in findings]
    return "\n".join(lines) + ("\n" if lines else "")
