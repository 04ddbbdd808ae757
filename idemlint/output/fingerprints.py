"""Per-occurrence fingerprints that report formats share (SARIF, GitLab Code Quality)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from idemlint.finding import Finding


def occurrence_fingerprints(findings: Sequence[Finding]) -> list[str]:
    """A fingerprint per finding, as GitHub's own upload tool makes `primaryLocationLineHash`:
    the hash, then `:n` for the n-th finding with that hash in the file (counted in line order,
    whatever the input order), so two findings on identical lines of one function are not
    merged into one alert, and both keep their fingerprints when the lines above them change.

    Rule findings hash their code, path, enclosing function and normalised line text (the
    engine's fingerprint). The engine's own findings carry none: an IDM900 (one per file, its
    message naming a position that moves with every edit) is identified by its path, an
    IDM800 by its path and the codes it names."""
    from idemlint.registry import PARSE_ERROR

    def base(finding: Finding) -> str:
        if finding.fingerprint:
            return finding.fingerprint
        basis = f"{finding.code}\0{finding.path}"
        if finding.code != PARSE_ERROR:
            basis += f"\0{finding.message}"
        return hashlib.sha256(basis.encode()).hexdigest()[:20]

    hashes = [base(f) for f in findings]
    seen: dict[tuple[str, str], int] = {}
    out = [""] * len(findings)
    for index in sorted(range(len(findings)), key=lambda i: (findings[i], i)):
        key = (findings[index].path, hashes[index])
        seen[key] = seen.get(key, 0) + 1
        out[index] = f"{hashes[index]}:{seen[key]}"
    return out
