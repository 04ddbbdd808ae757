"""Property-based checks: the engine never raises, never reports an internal error, and
is deterministic. Bounded here; `IDEMLINT_FUZZ_EXAMPLES=5000 pytest tests/test_fuzz.py`
runs a longer campaign."""

from __future__ import annotations

import os

import hypothesmith
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import FIXTURES, lint

EXAMPLES = int(os.environ.get("IDEMLINT_FUZZ_EXAMPLES", "60"))
FIXTURE_SOURCES = [p.read_text(encoding="utf-8") for p in sorted(FIXTURES.rglob("*.py"))]
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)


def assert_well_behaved(source: str) -> None:
    first = lint(source, unused_noqa=True)
    assert first.errors == (), first.errors
    codes = {f.code for f in first.findings}
    assert "IDM900" not in codes or codes == {"IDM900"}
    second = lint(source, unused_noqa=True)
    assert [(f.line, f.col, f.code, f.message) for f in first.findings] == [
        (f.line, f.col, f.code, f.message) for f in second.findings
    ]


@SETTINGS
@given(hypothesmith.from_grammar())
def test_generated_python_never_breaks_the_engine(source: str) -> None:
    # Generated programs rarely contain trigger words; a header makes every rule run.
    assert_well_behaved("# retry idempotency_key uuid update status select timeout\n" + source)


@st.composite
def mutated_fixture(draw: st.DrawFn) -> str:
    lines = draw(st.sampled_from(FIXTURE_SOURCES)).splitlines()
    for _ in range(draw(st.integers(1, 6))):
        if not lines:
            break
        index = draw(st.integers(0, len(lines) - 1))
        action = draw(st.sampled_from(["delete", "duplicate", "indent", "dedent", "truncate"]))
        if action == "delete":
            del lines[index]
        elif action == "duplicate":
            lines.insert(index, lines[index])
        elif action == "indent":
            lines[index] = "    " + lines[index]
        elif action == "dedent":
            lines[index] = lines[index].lstrip()
        else:
            lines[index] = lines[index][: draw(st.integers(0, len(lines[index])))]
    return "\n".join(lines) + "\n"


@SETTINGS
@given(mutated_fixture())
def test_mutated_fixtures_never_break_the_engine(source: str) -> None:
    assert_well_behaved(source)
