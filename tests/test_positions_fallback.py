"""`idemlint.parsing.positions` on libcst's public PositionProvider: the fallback it takes
when the internal code-generation hooks that idemlint.source_spans uses are gone or changed
(an ImportError, AttributeError or TypeError from building `SourceSpans`).

The fast path is made to fail as a changed libcst would make it fail, and every fixture is
linted again: each finding must come out exactly as on the fast path (code, line, column,
end, and what is derived from positions: message, fix, related lines, fingerprint), and the
fallback must really have been taken. tests/test_engine.py pins the two span computations
against each other node by node; this pins what users see.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import libcst as cst
import pytest
from test_fixtures import FIXTURE_FILES

import idemlint.source_spans
from idemlint import parsing
from idemlint.finding import Finding

from conftest import FIXTURES, KEY_IN_LOOP, lint
from expectations import parse_fixture


def located(findings: tuple[Finding, ...] | list[Finding]) -> list[tuple[Any, ...]]:
    """Everything of a finding that positions decide (Finding's equality compares only
    path, line, column and code)."""
    return [
        (f.code, f.line, f.col, f.end_line, f.end_col, f.message, f.fix, f.related, f.fingerprint) for f in findings
    ]


class Calls:
    """How often the fast path was tried and how often the fallback answered."""

    def __init__(self) -> None:
        self.fast = 0
        self.fallback = 0


def force_fallback(monkeypatch: pytest.MonkeyPatch, error: type[Exception]) -> Calls:
    """Make building SourceSpans raise `error`, as a changed libcst would, and count the
    fallback's answers (positions() looks both names up at call time)."""
    calls = Calls()
    provider: Callable[[cst.Module], Mapping[cst.CSTNode, tuple[int, int, int, int]]] = parsing._provider_positions

    def broken(module: cst.Module) -> None:
        calls.fast += 1
        raise error("libcst's internal code-generation hooks changed")

    def counted(module: cst.Module) -> Mapping[cst.CSTNode, tuple[int, int, int, int]]:
        calls.fallback += 1
        return provider(module)

    monkeypatch.setattr(idemlint.source_spans, "SourceSpans", broken)
    monkeypatch.setattr(parsing, "_provider_positions", counted)
    return calls


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_the_fallback_locates_every_fixture_finding_as_the_fast_path_does(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = parse_fixture(path)
    if not spec.runs_here:
        pytest.skip(f"needs Python {spec.min_python}")
    source = path.read_text(encoding="utf-8")

    def findings() -> list[tuple[Any, ...]]:
        result = lint(source, path=path.name, config=spec.config(), unused_noqa=True)
        assert result.errors == ()
        return located(result.findings)

    fast = findings()
    calls = force_fallback(monkeypatch, AttributeError)
    fallback = findings()
    assert fallback == fast
    assert calls.fallback == calls.fast  # every time the fast path was tried, the fallback answered
    if any(code not in ("IDM800", "IDM900") for code, *_ in fast):  # these two need no node positions
        assert calls.fallback > 0, "the fallback was never taken"


def test_every_fixture_with_findings_took_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-fixture test above is not vacuous: across the fixtures, the fallback located
    findings, and far more than a handful of them."""
    calls = force_fallback(monkeypatch, AttributeError)
    total = 0
    for path in FIXTURE_FILES:
        spec = parse_fixture(path)
        if spec.runs_here:
            total += len(lint(path.read_text(encoding="utf-8"), path=path.name, config=spec.config()).findings)
    assert total > 100 and calls.fallback >= len(FIXTURE_FILES) // 2, (total, calls.fallback)


@pytest.mark.parametrize("error", [ImportError, TypeError])
def test_each_error_the_fallback_catches_takes_it(error: type[Exception], monkeypatch: pytest.MonkeyPatch) -> None:
    fast = located(lint(KEY_IN_LOOP).findings)
    assert fast and fast[0][0] == "IDM001"
    calls = force_fallback(monkeypatch, error)
    assert located(lint(KEY_IN_LOOP).findings) == fast
    assert calls.fallback == calls.fast == 1


def test_a_missing_source_spans_module_takes_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    """The import itself failing (libcst._nodes.internal gone): `import` raises ImportError."""
    fast = located(lint(KEY_IN_LOOP).findings)
    calls = force_fallback(monkeypatch, AttributeError)
    monkeypatch.setitem(sys.modules, "idemlint.source_spans", None)  # `from ... import` now fails
    assert located(lint(KEY_IN_LOOP).findings) == fast
    assert (calls.fast, calls.fallback) == (0, 1)
