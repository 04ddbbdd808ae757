"""Report formatters: pure functions from findings to text, chosen by name from one table.

Every formatter takes the findings, whether to colour, and a `ReportContext` with what some
formats need of the run: the project root (SARIF's `%SRCROOT%`), the files checked (JUnit's
passed cases) and the source lines (text's excerpts). CI formats get root-relative paths.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from idemlint.finding import Finding


@dataclass(frozen=True)
class ReportContext:
    root: Path | None = None  # the folder relative paths start from (the project root); None: the cwd
    checked: Sequence[str] = ()  # every file checked, as the findings name them
    sources: Mapping[str, Sequence[str]] | None = None  # each file's lines, for excerpts


PLAIN = ReportContext()
Formatter = Callable[[Sequence[Finding], bool, ReportContext], str]


class _Format(NamedTuple):
    module: str
    function: str
    ci: bool  # read by a CI system: paths relative to the project root


_FORMATS: dict[str, _Format] = {
    "text": _Format("idemlint.output.text", "format_text", False),
    "json": _Format("idemlint.output.json", "format_json", False),
    "sarif": _Format("idemlint.output.sarif", "format_sarif", True),
    "github": _Format("idemlint.output.github", "format_github", True),
    "concise": _Format("idemlint.output.concise", "format_concise", False),
    "gitlab": _Format("idemlint.output.gitlab", "format_gitlab", True),
    "junit": _Format("idemlint.output.junit", "format_junit", True),
    "pylint": _Format("idemlint.output.pylint", "format_pylint", False),
}
FORMATS = tuple(_FORMATS)


def get_formatter(name: str) -> Formatter:
    """The formatter of a format (imported on first use: a run loads only its own)."""
    entry = _FORMATS[name]
    formatter: Formatter = getattr(importlib.import_module(entry.module), entry.function)
    return formatter


def for_ci(name: str) -> bool:
    return _FORMATS[name].ci
