"""Expected findings written as comments in fixture files (Semgrep/bugbear style).

    call()  # expect: IDM001            the finding is on this line
    # expect: IDM001, IDM301            on its own line: applies to the next code line
    call()  # expect: IDM001 col=12 "uuid4"   optional column and message substring
    call()  # ok: IDM001                a deliberate near miss: must not be reported
    call()  # todo-expect: IDM101       known false negative: asserts it is NOT reported today
    call()  # todo-ok: IDM103           known false positive: asserts it IS reported today

A header line `# idemlint-test: python>=3.11` skips the file on older Pythons, and
`# idemlint-options: state-columns=lifecycle; all-updates-need-count=true` checks it with those
options (the keys of `[tool.idemlint]`; lists comma-separated), as bugbear's `# OPTIONS` line
does. Parsed with regexes, never eval.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

_ANNOTATION = re.compile(r"#\s*(?P<kind>expect|ok|todo-expect|todo-ok):\s*(?P<rest>.*)$")
_CODE = re.compile(r"IDM\d{3}")
_COL = re.compile(r"\bcol=(\d+)")
_MESSAGE = re.compile(r'"([^"]*)"')
_HEADER = re.compile(r"#\s*idemlint-test:\s*python>=(\d+)\.(\d+)")
_OPTIONS = re.compile(r"#\s*idemlint-options:\s*(?P<options>.+)$")


@dataclass(frozen=True)
class Expectation:
    line: int
    code: str
    kind: str  # expect | ok | todo-expect | todo-ok
    col: int | None = None
    message: str | None = None


@dataclass
class FixtureSpec:
    path: Path
    expectations: list[Expectation] = field(default_factory=list)
    min_python: tuple[int, int] = (3, 0)
    options: dict[str, object] = field(default_factory=dict)  # [tool.idemlint] keys for this file

    def config(self):  # type: ignore[no-untyped-def]
        """The configuration the file is checked with: its options header through the real parser."""
        from idemlint.config import parse_table

        return parse_table(dict(self.options), self.path.parent, f"{self.path} (idemlint-options)")

    @property
    def expected_now(self) -> set[tuple[int, str]]:
        """What the engine must report today: expected findings plus known false positives."""
        return {(e.line, e.code) for e in self.expectations if e.kind in ("expect", "todo-ok")}

    @property
    def runs_here(self) -> bool:
        return sys.version_info[:2] >= self.min_python


def parse_fixture(path: Path) -> FixtureSpec:
    spec = FixtureSpec(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    pending: list[tuple[str, str]] = []
    for number, text in enumerate(lines, start=1):
        header = _HEADER.search(text)
        if header:
            spec.min_python = (int(header.group(1)), int(header.group(2)))
        options = _OPTIONS.search(text)
        if options:
            for item in options.group("options").split(";"):
                key, _, value = item.partition("=")
                key, value = key.strip(), value.strip()
                if value.lower() in ("true", "false"):
                    spec.options[key] = value.lower() == "true"
                else:
                    spec.options[key] = [v.strip() for v in value.split(",") if v.strip()]
            continue
        stripped = text.strip()
        match = _ANNOTATION.search(text)
        if stripped.startswith("#"):
            if match:
                pending.append((match.group("kind"), match.group("rest")))
            continue
        if not stripped:
            continue
        annotations = pending
        pending = []
        if match:
            annotations = [*annotations, (match.group("kind"), match.group("rest"))]
        for kind, rest in annotations:
            col = _COL.search(rest)
            message = _MESSAGE.search(rest)
            codes = _CODE.findall(rest.split('"')[0])
            if not codes:
                raise ValueError(f"{path}:{number}: annotation names no IDM code: {rest!r}")
            for code in codes:
                spec.expectations.append(
                    Expectation(
                        number, code, kind, int(col.group(1)) if col else None, message.group(1) if message else None
                    )
                )
    if pending:
        raise ValueError(f"{path}: annotation at the end of the file applies to no line")
    return spec
