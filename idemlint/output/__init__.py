"""Report formatters: pure functions from findings to text, chosen by name."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from idemlint.finding import Finding

Formatter = Callable[[Sequence[Finding], bool], str]


def get_formatter(name: str) -> Formatter:
    if name == "text":
        from idemlint.output.text import format_text

        return format_text
    if name == "json":
        from idemlint.output.json import format_json

        return format_json
    if name == "github":
        from idemlint.output.github import format_github

        return format_github
    if name == "sarif":
        from idemlint.output.sarif import format_sarif

        return format_sarif
    raise KeyError(name)


FORMATS = ("text", "json", "sarif", "github")
