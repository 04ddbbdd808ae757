"""A finding's confidence, from the precision measured on hand-judged real code.

A rule's own confidence is a guess; what a user can trust is how often findings like this one
were right when someone read the code. `benchmarks/calibrate.py` runs idemlint over the
development corpora, labels each finding from the corpora's rows and the judged sheets in
`benchmarks/corpus/`, and counts, per rule code, how many findings of each kind of evidence
and file role were true. Its output is `idemlint/data/calibration.json`, shipped with the
package; this module reads it.

A kind's precision is estimated from the general to the particular: the rule's declared
confidence is a prior worth PRIOR_WEIGHT judged findings, the rule's judged findings update it,
then the findings with the same evidence; then the file's role moves that by as much as the
rule's findings of other evidence in files of that role were righter or wronger than those
anywhere (an example or a migration is judged out of scope far more often than a service's
module, whatever the evidence); then the findings with the same evidence in the same role. No
judged finding counts in both of the last two steps. Each step weighs its
own count against the estimate so far, so a kind judged twice moves its figure a little and
one judged forty times decides it (empirical Bayes shrinkage: a rule nobody has judged keeps
what it declares). A finding is `high` where the estimate is at least 0.90, `medium` from
0.70, else `low`.
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
        return {"thresholds": {"high": 0.9, "medium": 0.7}, "prior_weight": PRIOR_WEIGHT, "rules": {}}
    return data if isinstance(data, dict) else {}


# What a rule's declared confidence is worth as a prior precision, and how many judged findings
# that prior counts as against each narrower group's own.
DECLARED_PRECISION = {"high": 0.92, "medium": 0.8, "low": 0.6}
PRIOR_WEIGHT = 5


def estimate(code: str, evidence: str, role: str, declared: str = "medium") -> tuple[float, int]:
    """(the estimated precision of findings of `code` with this evidence in a file of this
    role, how many judged findings of exactly this kind it rests on)."""
    groups = table().get("rules", {}).get(code, {})
    weight = int(table().get("prior_weight", PRIOR_WEIGHT))

    def counts(key: str) -> tuple[int, int]:
        found = groups.get(key) or {}
        return int(found.get("judged", 0)), int(found.get("true", 0))

    def shrunk(judged: int, true: int, prior: float) -> float:
        return (true + weight * prior) / (judged + weight) if judged > 0 else prior

    everywhere, by_evidence, by_role, final = f"{ANY}|{ANY}", f"{evidence}|{ANY}", f"{ANY}|{role}", f"{evidence}|{role}"
    rule_wide = shrunk(*counts(everywhere), DECLARED_PRECISION.get(declared, 0.8))
    if final == everywhere:
        return rule_wide, counts(everywhere)[0]
    if ANY in (evidence, role):  # one group after the rule's own
        return shrunk(*counts(final), rule_wide), counts(final)[0]
    if not counts(by_evidence)[0]:
        precision = shrunk(*counts(by_role), rule_wide)
    else:
        precision = shrunk(*counts(by_evidence), rule_wide)
        # the role's lean, from the rule's findings of other evidence (this kind's own in the role
        # are the last step's): how much righter or wronger they were there than anywhere
        others = (counts(everywhere)[0] - counts(by_evidence)[0], counts(everywhere)[1] - counts(by_evidence)[1])
        in_role = (counts(by_role)[0] - counts(final)[0], counts(by_role)[1] - counts(final)[1])
        baseline = shrunk(*others, rule_wide)
        precision = min(1.0, max(0.0, precision + shrunk(*in_role, baseline) - baseline))
    return shrunk(*counts(final), precision), counts(final)[0]


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
    """A rule's confidence over every judged finding of it (SARIF's rule `precision`)."""
    return level(estimate(rule.code, ANY, ANY, str(rule.confidence))[0])


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


# The one confidence scale, least sure first: the CLI, the configuration, the server and every
# output format read it here (SARIF's `precision` and GitLab's severity included).
CONFIDENCE_LEVELS = ("low", "medium", "high")
CONFIDENCE_RANK = {level: rank for rank, level in enumerate(CONFIDENCE_LEVELS)}

# What idemlint shows when no --min-confidence is given: every `high` finding, and a `medium`
# one whose kind's estimated precision is at least this. Chosen from the table: at 0.85 the
# default output of the judged corpora is at least 85% true (benchmarks/calibrate.py prints it),
# and the kinds it hides (IDM101 on an instance a caller passed in, IDM102, findings in scripts
# and examples) are the ones judged wrong most often.
DEFAULT_FLOOR = 0.85


def shown_by_default(code: str, evidence: str, role: str, confidence: str) -> bool:
    """Whether a finding of this kind and confidence is in the default output."""
    if confidence == "high":
        return True
    return confidence == "medium" and estimate(code, evidence, role)[0] >= DEFAULT_FLOOR


def calibrated(code: str, evidence: str, role: str, declared: str, lowered: str | None = None) -> str:
    """The confidence of a finding of `code` reached this way in a file of this role: from the
    estimated precision of its kind, starting from `declared` (the rule's own). `lowered`: what
    the rule says of this one finding (a management command, a parameter a caller may have
    locked); it stands unless this very kind was judged often enough to say otherwise."""
    precision, judged = estimate(code, evidence, role, declared)
    found = level(precision)
    if lowered is not None and judged < PRIOR_WEIGHT and CONFIDENCE_RANK[lowered] < CONFIDENCE_RANK[found]:
        return lowered
    return found
