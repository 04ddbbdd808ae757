"""GitLab Code Quality: the JSON array of issues a `codequality` report artifact holds.

Each issue has the fields GitLab's "Code Quality report format" requires: `description`,
`check_name`, `fingerprint`, `severity` and `location` (`path`, `lines.begin`). GitLab merges
issues with equal fingerprints and matches them across pipelines by fingerprint, so each is
unique in the report and survives edits elsewhere in the file (see `occurrence_fingerprints`).
Paths are written as given: GitLab wants them relative to the repository root, as the CLI
passes them.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from idemlint.calibration import CONFIDENCE_RANK
from idemlint.finding import Finding
from idemlint.output import PLAIN, ReportContext
from idemlint.output.fingerprints import occurrence_fingerprints
from idemlint.stakes import at_stake

# GitLab's scale is info < minor < major < critical < blocker. Errors rank by how sure the
# finding is, one step lower when nothing outside the system is at stake (idemlint.stakes);
# warnings are minor whatever their confidence.
_SCALE = ("minor", "major", "critical")


def severity(finding: Finding) -> str:
    if finding.severity != "error":
        return "minor"
    rank = CONFIDENCE_RANK.get(finding.confidence, 1)
    if finding.stakes and finding.stakes != "external":
        rank = max(0, rank - 1)
    return _SCALE[rank]


def format_gitlab(findings: Sequence[Finding], color: bool, context: ReportContext = PLAIN) -> str:
    issues = []
    for finding, occurrence in zip(findings, occurrence_fingerprints(findings), strict=True):
        # The occurrence is unique per (path, fingerprint); the code and path go in too so that
        # findings of different files never share a fingerprint, whatever fingerprints they carry.
        basis = f"{finding.code}\0{finding.path}\0{occurrence}"
        issues.append(
            {
                "description": f"{finding.code} {finding.message}{at_stake(finding)}",
                "check_name": finding.code,
                "fingerprint": hashlib.sha256(basis.encode()).hexdigest(),
                "severity": severity(finding),
                "location": {"path": finding.path, "lines": {"begin": finding.line}},
            }
        )
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"
