"""Confidence is measured, not asserted (issue 30): the engine takes it from the shipped table
of precision on hand-judged real code, per rule, evidence and file role."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idemlint import calibration
from idemlint.paths import role_of

from conftest import FIXTURES, SLEEP_IN_LOOP, lint


def write(path: Path, rules: dict) -> None:  # type: ignore[type-arg]
    path.write_text(json.dumps({"thresholds": {"high": 0.9, "medium": 0.7}, "prior_weight": 5, "rules": rules}))


def test_a_kind_s_estimate_goes_from_the_rule_to_its_evidence_and_role(calibration_table: Path) -> None:
    write(
        calibration_table,
        {
            "IDM101": {
                "*|*": {"judged": 60, "true": 48},  # 0.8
                "read in the function|*": {"judged": 40, "true": 38},
                "read in the function|source": {"judged": 36, "true": 36},
                "read in the function|script": {"judged": 4, "true": 2},
                "read by a helper|*": {"judged": 2, "true": 2},
                "read by a helper|source": {"judged": 2, "true": 2},
            }
        },
    )
    # (48 + 5 * 0.8) / 65 = 0.8, then (38 + 5 * 0.8) / 45 = 0.933, then (36 + 5 * 0.933) / 41 = 0.992
    precision, judged = calibration.estimate("IDM101", "read in the function", "source", "medium")
    assert (round(precision, 3), judged) == (0.992, 36)
    assert calibration.calibrated("IDM101", "read in the function", "source", "low") == "high"
    # two of four judged in scripts: (2 + 5 * 0.933) / 9 = 0.74
    assert calibration.calibrated("IDM101", "read in the function", "script", "high") == "medium"
    # two judged, both true, do not make a kind sure: (2 + 5 * 0.8) / 7 = 0.857, then 0.898
    assert calibration.calibrated("IDM101", "read by a helper", "source", "medium") == "medium"
    # never judged at all: the rule's own word
    assert calibration.calibrated("IDM999", "read in the function", "source", "medium") == "medium"
    assert calibration.calibrated("IDM999", "read in the function", "source", "high") == "high"
    # what the rule says of one finding (a management command) stands unless its kind was judged often
    assert calibration.calibrated("IDM101", "read by a helper", "script", "medium", lowered="low") == "low"
    assert calibration.calibrated("IDM101", "read in the function", "source", "medium", lowered="low") == "high"


def test_a_file_s_role_moves_the_estimate_by_its_own_lean_whatever_the_evidence(calibration_table: Path) -> None:
    write(
        calibration_table,
        {
            "IDM202": {
                "*|*": {"judged": 100, "true": 82},
                "*|source": {"judged": 89, "true": 81},
                "*|example": {"judged": 11, "true": 1},  # all but one judged out of scope
                "in the function|*": {"judged": 80, "true": 72},
                "in the function|source": {"judged": 79, "true": 71},
                "in the function|example": {"judged": 1, "true": 1},
            }
        },
    )
    # (82 + 5 * 0.8) / 105 = 0.819, then (72 + 5 * 0.819) / 85 = 0.895. The other evidence's 20
    # findings (10 true): (10 + 5 * 0.819) / 25 = 0.564 anywhere; its 10 in examples (none true):
    # (0 + 5 * 0.564) / 15 = 0.188, a lean of -0.376, so 0.519; the one true example: (1 + 5 *
    # 0.519) / 6 = 0.599
    precision, judged = calibration.estimate("IDM202", "in the function", "example", "medium")
    assert (round(precision, 3), judged) == (0.599, 1)
    assert calibration.calibrated("IDM202", "in the function", "example", "medium") == "low"
    # in a service's module the other evidence was all true (10 of 10): the lean lifts it
    assert round(calibration.estimate("IDM202", "in the function", "source", "medium")[0], 3) == 0.905
    # the rule's own figure counts its findings once
    assert calibration.estimate("IDM202", "*", "*", "medium") == (pytest.approx(86 / 105), 100)


def test_one_judged_finding_alone_does_not_lift_a_kind_a_level(calibration_table: Path) -> None:
    one = {"judged": 1, "true": 1}
    write(
        calibration_table,
        {"IDM202": {"*|*": one, "*|example": one, "in the function|*": one, "in the function|example": one}},
    )
    # (1 + 5 * 0.8) / 6 = 0.833, (1 + 5 * 0.833) / 6 = 0.861; no other finding leans the role;
    # (1 + 5 * 0.861) / 6 = 0.884: the `medium` the rule declares
    assert round(calibration.estimate("IDM202", "in the function", "example", "medium")[0], 3) == 0.884
    assert calibration.calibrated("IDM202", "in the function", "example", "medium") == "medium"


def test_a_missing_table_leaves_each_rule_its_declared_confidence(calibration_table: Path) -> None:
    assert not calibration_table.exists()
    assert calibration.calibrated("IDM001", calibration.IN_FUNCTION, "source", "high") == "high"
    assert calibration.calibrated("IDM003", calibration.IN_FUNCTION, "source", "medium") == "medium"


def test_the_engine_takes_confidence_from_the_shipped_table() -> None:
    """Every fixture finding's confidence is what the shipped table's estimate says for its code,
    evidence and role (or lower, where the rule lowered this one and its kind was judged little)."""
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
            assert finding.evidence and finding.role in (role_of(path.name), "script")
            precision, judged = calibration.estimate(
                finding.code, finding.evidence, finding.role, declared[finding.code]
            )
            expected = calibration.level(precision)
            if judged >= calibration.PRIOR_WEIGHT:
                assert finding.confidence == expected, finding
            else:  # what the rule said of this one finding may be lower
                assert calibration.CONFIDENCE_RANK[finding.confidence] <= calibration.CONFIDENCE_RANK[expected], finding
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
        ("tool/__main__.py", "script"),
        ("tools/release.py", "script"),
        ("bin/deploy.py", "script"),
        # a `tools` package inside the product (an SDK's tool runner) is the product
        ("src/sdk/lib/tools/runner.py", "source"),
        ("shop/dev/fixtures.py", "source"),
        # an evaluation or benchmark harness beside the product is run by its developers
        ("themes/evals/synthetic/generator.py", "script"),
        ("benchmarks/speed.py", "script"),
    ],
)
def test_roles_from_paths(path: str, role: str) -> None:
    assert role_of(path) == role


@pytest.mark.parametrize(
    ("tail", "role"),
    [
        ('\nif __name__ == "__main__":\n    fetch("https://example.com")\n', "script"),
        ('\nif "__main__" == __name__:\n    fetch("https://example.com")\n', "script"),
        ("\nwhile not fetch('https://example.com'):\n    time.sleep(1)\n", "script"),
        # an import-time call or a module-level `for` is a module's own set-up, not a program
        ('\nfor url in ("https://example.com",):\n    fetch(url)\n', "source"),
        ('\nif __name__ == "shop.views":\n    fetch("https://example.com")\n', "source"),
        ("", "source"),
        # an escape Python rejects at run time (libcst parses it): not a crash, not a program
        ('\nif __name__ == "\\N{NO SUCH NAME}":\n    fetch("https://example.com")\n', "source"),
    ],
)
def test_a_file_run_as_a_program_is_a_script_whatever_its_path(tail: str, role: str) -> None:
    """A program run by hand (a `__main__` block, a wait loop at module level) is one-off code:
    its findings are judged, and shown, as a script's, even at the project's root. Its retry
    policy is one watched client's (no IDM202 herd); what it re-sends is still reported."""
    posting = SLEEP_IN_LOOP.replace("requests.get(url, timeout=5)", "requests.post(url, timeout=5)")
    findings = lint(posting + tail, path="shop/fetcher.py").findings
    expected = [("IDM301", 9, role), ("IDM202", 11, role)] if role == "source" else [("IDM301", 9, role)]
    assert [(f.code, f.line, f.role) for f in findings] == expected
