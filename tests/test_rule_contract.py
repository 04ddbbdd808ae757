"""Every rule is documented, uniquely named, and its own examples behave."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from idemlint.docs import expected_files
from idemlint.rule import Rule
from idemlint.rules import ALL_RULES

from conftest import lint

FIELDS = ("code", "name", "summary", "what_it_does", "why", "fix_hint", "bad", "good", "fix_safety")


def _all_subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out.add(sub)
        out |= _all_subclasses(sub)
    return out


def test_registry_lists_every_concrete_rule_once_in_code_order() -> None:
    concrete = {r for r in _all_subclasses(Rule) if "code" in r.__dict__}
    assert set(ALL_RULES) == concrete
    codes = [r.code for r in ALL_RULES]
    assert codes == sorted(codes) and len(set(codes)) == len(codes)
    assert len({r.name for r in ALL_RULES}) == len(ALL_RULES)


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_rule_fields_are_filled(rule: type[Rule]) -> None:
    for field in FIELDS:
        assert getattr(rule, field, "").strip(), f"{rule.code}.{field} is empty"
    assert re.fullmatch(r"IDM\d{3}", rule.code)
    assert re.fullmatch(r"[a-z]+(-[a-z]+)+", rule.name)
    assert rule.severity in ("error", "warning") and rule.confidence in ("high", "medium", "low")


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_bad_example_is_reported_by_its_own_rule_only(rule: type[Rule]) -> None:
    codes = {f.code for f in lint(rule.bad).findings}
    assert codes == {rule.code}


@pytest.mark.parametrize("rule", ALL_RULES, ids=lambda r: r.code)
def test_good_example_is_clean(rule: type[Rule]) -> None:
    assert [(f.line, f.code, f.message) for f in lint(rule.good).findings] == []


def test_rules_page_and_readme_table_are_generated_from_the_rule_classes() -> None:
    root = Path(__file__).resolve().parent.parent
    for path, text in expected_files(root).items():
        assert path.read_text(encoding="utf-8") == text, f"{path.name} is stale: run `python -m idemlint.docs`"
    assert "<!-- rules-table:start -->" in (root / "README.md").read_text(encoding="utf-8")
