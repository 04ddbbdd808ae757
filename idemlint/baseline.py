"""Adopting idemlint on an existing codebase: record today's findings, report only new ones.

Entries match on (path, code, fingerprint), where the fingerprint hashes the finding's
normalised source line and enclosing function, so a baseline survives code moving up or
down the file. Counts matter: two identical findings need two entries.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from idemlint.finding import Finding

VERSION = 1


class BaselineError(Exception):
    pass


def write_baseline(path: Path, findings: Sequence[Finding]) -> None:
    entries = [{"path": f.path, "code": f.code, "fingerprint": f.fingerprint, "message": f.message} for f in findings]
    path.write_text(
        json.dumps({"version": VERSION, "findings": entries}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )


def load_baseline(path: Path) -> Counter[tuple[str, str, str]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or "not UTF-8 text"
        raise BaselineError(f"{path}: cannot read the baseline: {reason.lower()}") from error
    try:
        data = json.loads(text)
    except ValueError as error:
        line = getattr(error, "lineno", 1)
        raise BaselineError(
            f"{path}: malformed baseline: not JSON (line {line}); write one with --write-baseline"
        ) from error
    try:
        return Counter((e["path"], e["code"], e["fingerprint"]) for e in data["findings"])
    except (KeyError, TypeError) as error:
        raise BaselineError(
            f'{path}: malformed baseline: expected {{"findings": [{{"path", "code", "fingerprint"}}]}}'
        ) from error


def apply_baseline(findings: Sequence[Finding], baseline: Counter[tuple[str, str, str]]) -> tuple[list[Finding], int]:
    """The findings not in the baseline, and how many baseline entries matched nothing (stale)."""
    remaining = Counter(baseline)
    new = []
    for finding in findings:
        key = (finding.path, finding.code, finding.fingerprint)
        if remaining[key] > 0:
            remaining[key] -= 1
        else:
            new.append(finding)
    return new, sum(remaining.values())


def in_scope(
    baseline: Counter[tuple[str, str, str]], paths: set[str], codes: set[str]
) -> Counter[tuple[str, str, str]]:
    """The entries a run can judge: for the files it checked and the rules it ran. The others
    (another folder, an unselected rule) are neither matched nor stale."""
    return Counter({key: n for key, n in baseline.items() if key[0] in paths and key[1] in codes})


def drop_stale(path: Path, stale: Counter[tuple[str, str, str]]) -> int:
    """Rewrite the baseline without the given entries (as many of each as counted); the rest,
    messages included, stays as it was. Returns how many entries went."""
    data = json.loads(path.read_text(encoding="utf-8"))
    left = Counter(stale)
    kept = []
    for entry in data["findings"]:
        key = (entry["path"], entry["code"], entry["fingerprint"])
        if left[key] > 0:
            left[key] -= 1
        else:
            kept.append(entry)
    path.write_text(
        json.dumps({"version": VERSION, "findings": kept}, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    return len(data["findings"]) - len(kept)
