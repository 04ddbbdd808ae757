"""GitHub Actions workflow commands: one `::error` / `::warning` annotation per finding."""

from __future__ import annotations

from collections.abc import Sequence

from idemlint.finding import Finding
from idemlint.output import PLAIN, ReportContext
from idemlint.stakes import at_stake


def escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(value: str) -> str:
    return escape_data(value).replace(":", "%3A").replace(",", "%2C")


def format_github(findings: Sequence[Finding], color: bool, context: ReportContext = PLAIN) -> str:
    lines = []
    for f in findings:
        level = "error" if f.severity == "error" else "warning"
        properties = ",".join(
            f"{key}={escape_property(str(value))}"
            for key, value in (
                ("file", f.path),
                ("line", f.line),
                ("col", f.col),
                ("endLine", max(f.end_line, f.line)),
                ("endColumn", f.end_col),
                ("title", f"{f.code} {f.name}"),
            )
        )
        text = f"{f.code} {f.message}{at_stake(f)}. {f.suggestion}"
        lines.append(f"::{level} {properties}::{escape_data(text)}")
    return "\n".join(lines) + ("\n" if lines else "")
