"""A finding's confidence, from the precision measured on hand-judged real code.

A rule's own confidence is a guess; what a user can trust is how often findings like this one
were right when someone read the code. `benchmarks/calibrate.py` runs idemlint over the
development corpora, labels each finding from the corpora's rows and the judged sheets in
`benchmarks/corpus/`, and counts, per rule code, how many findings of each kind of evidence
and file role were true. Its output is `idemlint/data/calibration.json`, shipped with the
package; this module reads it. A finding's confidence is `high` where at least 90% of the
judged findings of its kind were true, `medium` from 70%, else `low`. A kind judged fewer
than `min_judged` times borrows the figure of the wider group it belongs to (the same
evidence in any file, the same role with any evidence, the rule as a whole), and only a rule
with too few judged findings keeps the confidence it declares.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

IN_FUNCTION = "in the function"  # reached by the rule's own reading of the function
THROUGH_PROJECT = "through a project function"  # a fact inherited from a callee's summary
TABLE = Path(__file__).parent / "data" / "calibration.json"
ANY = "*"


@lru_cache(maxsize=1)
def table() -> dict[str, Any]:
    """The shipped table; an empty one if it cannot be read (every rule keeps its own)."""
    try:
        data = json.loads(TABLE.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {"thresholds": {"high": 0.9, "medium": 0.7}, "min_judged": 5, "rules": {}}
    return data if isinstance(data, dict) else {}


def measured(code: str, evidence: str, role: str) -> tuple[int, int] | None:
    """(true, judged) for the narrowest group of findings like this one judged often enough."""
    found = _measured(code, evidence, role)
    return None if found is None else found[:2]


def _measured(code: str, evidence: str, role: str) -> tuple[int, int, bool] | None:
    """(true, judged, whether it is this exact kind rather than a wider group)."""
    data = table()
    groups = data.get("rules", {}).get(code, {})
    least = int(data.get("min_judged", 5))
    for key in (f"{evidence}|{role}", f"{evidence}|{ANY}", f"{ANY}|{role}", f"{ANY}|{ANY}"):
        counts = groups.get(key)
        if counts and counts.get("judged", 0) >= least:
            return int(counts["true"]), int(counts["judged"]), key == f"{evidence}|{role}"
    return None


def level(precision: float) -> str:
    thresholds = table().get("thresholds", {"high": 0.9, "medium": 0.7})
    if precision >= thresholds.get("high", 0.9):
        return "high"
    if precision >= thresholds.get("medium", 0.7):
        return "medium"
    return "low"


def rule_precision(code: str) -> tuple[int, int] | None:
    """(true, judged) over every judged finding of the rule, for its documentation."""
    counts = table().get("rules", {}).get(code, {}).get(f"{ANY}|{ANY}")
    return (int(counts["true"]), int(counts["judged"])) if counts and counts.get("judged") else None


def measured_level(rule: Any) -> str:
    """A rule's confidence over every judged finding of it (SARIF's rule `precision`), or the
    one it declares when too few were judged."""
    found = _measured(rule.code, ANY, ANY)
    return level(found[0] / found[1]) if found else str(rule.confidence)


def precision_note(code: str) -> str:
    """One sentence for `idemlint explain` and docs/rules.md: the rule's measured precision."""
    found = rule_precision(code)
    if found is None:
        return "Measured precision: no judged findings yet."
    true, judged = found
    return (
        f"Measured precision: {true / judged:.0%} of {judged} findings judged on real code were true "
        "(benchmarks/calibrate.py); each finding's confidence is measured for its kind of evidence."
    )


_ORDER = ("low", "medium", "high")
CONFIDENCE_RANK = {level: rank for rank, level in enumerate(_ORDER)}

# What idemlint shows when no --min-confidence is given: every `high` finding, and a `medium`
# one whose kind was judged true at least this often. Chosen from the table: at 0.85 the
# default output of sets A and B is at least 85% true, and the kinds it hides (IDM101 on an
# instance a caller passed in, IDM102, most of IDM301) are the ones judged wrong most often.
DEFAULT_FLOOR = 0.85


def shown_by_default(code: str, evidence: str, role: str, confidence: str) -> bool:
    """Whether a finding of this kind and confidence is in the default output."""
    if confidence == "high":
        return True
    if confidence != "medium":
        return False
    found = measured(code, evidence, role)
    return found is not None and found[0] >= DEFAULT_FLOOR * found[1]


def calibrated(code: str, evidence: str, role: str, declared: str, lowered: str | None = None) -> str:
    """The confidence of a finding of `code` reached this way in a file of this role: from the
    measured precision, or `declared` (the rule's own) where too few were judged. `lowered`:
    what the rule says of this one finding (a management command, a parameter a caller may
    have locked); a figure borrowed from a wider group never raises it, only this kind's own."""
    found = _measured(code, evidence, role)
    if found is None:
        return lowered or declared
    true, judged, exact = found
    measured_level = level(true / judged)
    if lowered is not None and not exact and _ORDER.index(lowered) < _ORDER.index(measured_level):
        return lowered
    return measured_level
