"""One parametrised test over every fixture: the exact (line, code) set must match."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import FIXTURES, lint
from expectations import parse_fixture

FIXTURE_FILES = sorted(p for p in FIXTURES.rglob("*.py") if not p.name.endswith(".fixed.py"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture_findings_match_annotations(path: Path) -> None:
    spec = parse_fixture(path)
    if not spec.runs_here:
        pytest.skip(f"needs Python {spec.min_python}")
    result = lint(path.read_text(encoding="utf-8"), path=path.name, config=spec.config(), unused_noqa=True)
    assert result.errors == ()
    actual = {(f.line, f.code) for f in result.findings}
    missing = sorted(spec.expected_now - actual)
    unexpected = sorted(actual - spec.expected_now)
    details = {(f.line, f.code): f.message for f in result.findings}
    assert not missing and not unexpected, f"missing: {missing}\nunexpected: {[(k, details[k]) for k in unexpected]}"
    by_key = {(f.line, f.code): f for f in result.findings}
    for expectation in spec.expectations:
        finding = by_key.get((expectation.line, expectation.code))
        if finding is None or expectation.kind != "expect":
            continue
        if expectation.col is not None:
            assert finding.col == expectation.col, f"line {expectation.line}: column {finding.col}"
        if expectation.message is not None:
            assert expectation.message in finding.message, f"line {expectation.line}: {finding.message!r}"


def test_every_rule_has_fixtures_with_positives_and_negatives() -> None:
    from idemlint.rules import ALL_RULES

    kinds: dict[str, set[str]] = {}
    for path in FIXTURE_FILES:
        for expectation in parse_fixture(path).expectations:
            kinds.setdefault(expectation.code, set()).add(expectation.kind)
    for rule in ALL_RULES:
        assert {"expect", "ok"} <= kinds.get(rule.code, set()), f"{rule.code} needs positive and negative fixtures"


FIXED_PAIRS = sorted(p for p in FIXTURE_FILES if p.with_name(p.stem + ".fixed.py").exists())


@pytest.mark.parametrize("path", FIXED_PAIRS, ids=lambda p: p.name)
def test_fixes_produce_the_fixed_file_and_settle(path: Path) -> None:
    from idemlint.config import Config
    from idemlint.fixes import fix_source
    from idemlint.rules import ALL_RULES

    source = path.read_text(encoding="utf-8")
    expected = path.with_name(path.stem + ".fixed.py").read_text(encoding="utf-8")
    before = lint(source, path=path.name).findings
    once = fix_source(source, path.name, Config(), ALL_RULES, unsafe=True)
    assert once.error is None
    assert once.text == expected
    twice = fix_source(once.text, path.name, Config(), ALL_RULES, unsafe=True)
    assert (twice.applied, twice.text) == (0, once.text), "fixes must settle after one application"
    after = lint(once.text, path=path.name).findings
    assert [f for f in after if f.fix is not None] == []
    fixable = [f for f in before if f.fix is not None]
    assert fixable and len(after) == len(before) - len(fixable), "fixed findings are gone and no new ones appear"


def test_safe_fixes_alone_leave_unsafe_ones() -> None:
    from idemlint.config import Config
    from idemlint.fixes import fix_source
    from idemlint.rules import ALL_RULES

    source = (FIXTURES / "fixes" / "IDM202_add_jitter.py").read_text(encoding="utf-8")
    outcome = fix_source(source, "jitter.py", Config(), ALL_RULES, unsafe=False)
    assert (outcome.applied, outcome.text) == (0, source)
