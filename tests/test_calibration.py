"""Confidence is measured, not asserted (issue 30): the engine takes it from the shipped table
of precision on hand-judged real code, per rule, evidence and file role."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idemlint import calibration
from idemlint.paths import role_of

from conftest import FIXTURES, lint


def write(path: Path, rules: dict) -> None:  # type: ignore[type-arg]
    path.write_text(json.dumps({"thresholds": {"high": 0.9, "medium": 0.7}, "min_judged": 5, "rules": rules}))


def test_confidence_follows_measured_precision_and_falls_back_to_wider_groups(calibration_table: Path) -> None:
    write(
        calibration_table,
        {
            "IDM101": {
                "read in the function|source": {"judged": 10, "true": 9},
                "read in the function|*": {"judged": 14, "true": 10},
                "read by a caller (an instance passed in)|source": {"judged": 3, "true": 3},
                "read by a caller (an instance passed in)|*": {"judged": 3, "true": 3},
                "*|source": {"judged": 13, "true": 12},
                "*|script": {"judged": 4, "true": 0},
                "*|*": {"judged": 20, "true": 13},
            }
        },
    )
    assert calibration.calibrated("IDM101", "read in the function", "source", "low") == "high"  # 9/10
    assert calibration.calibrated("IDM101", "read in the function", "script", "high") == "medium"  # 10/14
    # 3 judged are too few: the role's group (12/13) decides
    assert calibration.calibrated("IDM101", "read by a caller (an instance passed in)", "source", "low") == "high"
    # nothing narrower judged often enough: the rule as a whole, 13/20
    assert calibration.calibrated("IDM101", "read by a helper", "script", "high") == "low"
    assert calibration.calibrated("IDM999", "read in the function", "source", "medium") == "medium"  # never judged
    # a finding the rule lowered (a management command) keeps its lowering against a wider group
    assert calibration.calibrated("IDM101", "read by a helper", "script", "medium", lowered="low") == "low"
    # its own kind's measurement decides, lowered or not
    assert calibration.calibrated("IDM101", "read in the function", "source", "medium", lowered="low") == "high"


def test_a_missing_table_leaves_each_rule_its_declared_confidence(calibration_table: Path) -> None:
    assert not calibration_table.exists()
    assert calibration.calibrated("IDM001", calibration.IN_FUNCTION, "source", "high") == "high"


def test_the_engine_takes_confidence_from_the_shipped_table() -> None:
    """Every fixture finding's confidence is what the shipped table says for its code,
    evidence and role (the rule's own only where the table has too few judged findings)."""
    from idemlint.rules import ALL_RULES

    assert calibration.TABLE.is_file(), "idemlint/data/calibration.json is written by benchmarks/calibrate.py"
    declared = {rule.code: rule.confidence for rule in ALL_RULES}
    checked = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        if path.name.endswith(".fixed.py"):
            continue
        for finding in lint(path.read_text(encoding="utf-8"), path=path.name).findings:
            if finding.code not in declared:
                continue
            assert finding.evidence and finding.role == role_of(path.name)
            measured = calibration._measured(finding.code, finding.evidence, finding.role)
            if measured is not None:
                true, judged, exact = measured
                expected = calibration.level(true / judged)
                order = ("low", "medium", "high")
                if exact:
                    assert finding.confidence == expected, finding
                else:  # a wider group's figure, never above what the rule said of this one
                    assert order.index(finding.confidence) <= order.index(expected), finding
                checked += 1
    assert checked > 50


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("shop/views.py", "source"),
        ("shop/management/commands/expire.py", "management command"),
        ("scripts/backfill.py", "script"),
        ("examples/stocks/bot.py", "example"),
        ("tests/test_pay.py", "test"),
        ("shop/migrations/0001_initial.py", "migration"),
        ("setup.py", "script"),
    ],
)
def test_roles_from_paths(path: str, role: str) -> None:
    assert role_of(path) == role
