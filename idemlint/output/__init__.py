"""Report formatters: pure functions from findings to text, chosen by name."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from idemlint.finding import Finding

Formatter = Callable[[Sequence[Finding], bool], str]


def get_formatter(name: str) -> Formatter:
    if name == "text":
        from idemlint.output.text import format_text

        return format_text
    if name == "concise":
        from idemlint.output.concise import format_concise

        return format_concise
    if name == "json":
        from idemlint.output.json import format_json

        return format_json
    if name == "github":
        from idemlint.output.github import format_github

        return format_github
    if name == "sarif":
        from idemlint.output.sarif import format_sarif

        return format_sarif
    if name == "gitlab":
        from idemlint.output.gitlab import format_gitlab

        return format_gitlab
    if name == "junit":
        from idemlint.output.junit import format_junit

        return format_junit
    if name == "pylint":
        from idemlint.output.pylint import format_pylint

        return format_pylint
    raise KeyError(name)


FORMATS = ("text", "json", "sarif", "github", "concise", "gitlab", "junit", "pylint")
