from __future__ import annotations

import json
from collections.abc import Sequence

from idemlint.finding import Finding
from idemlint.output import PLAIN, ReportContext
from idemlint.output.fingerprints import occurrence_fingerprints


def format_json(findings: Sequence[Finding], color: bool, context: ReportContext = PLAIN) -> str:
    """`fingerprint` per occurrence, as SARIF and GitLab have it: two findings on identical
    lines stay two, and an IDM900 is known by its path (see `occurrence_fingerprints`)."""
    rows = []
    for finding, fingerprint in zip(findings, occurrence_fingerprints(findings), strict=True):
        row = finding.to_dict()
        row["fingerprint"] = fingerprint
        rows.append(row)
    return json.dumps(rows, indent=2, ensure_ascii=False) + "\n"
