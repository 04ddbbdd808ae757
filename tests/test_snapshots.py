"""One rendered snapshot per rule family: message, help, position and source excerpt, reviewed like code.

Each family has a small input under `snapshots/inputs/` that triggers every rule of the family
once; `snapshots/<family>.txt` is the exact text `idemlint check` prints for it, through the real
CLI with `--isolated --no-cache --color never --show-source` and paths relative to a scratch
folder, so it reads the same on any machine. A change to any of that shows up as a diff in
review. After an intended change, rewrite them with

    IDEMLINT_UPDATE_SNAPSHOTS=1 pytest tests/test_snapshots.py

and review the diff of `tests/snapshots/` like code. An input named `*.py.txt` is copied as
`*.py` (a file that must not parse cannot be a `.py` file of this repository).
"""

from __future__ import annotations

import difflib
import os
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.cli import cli
from idemlint.registry import PARSE_ERROR, UNUSED_SUPPRESSION
from idemlint.rules import ALL_RULES

SNAPSHOTS = Path(__file__).parent / "snapshots"
INPUTS = SNAPSHOTS / "inputs"
# family -> (the prefix of its rules' codes, or None for idemlint's own codes; its input files)
FAMILIES: dict[str, tuple[str | None, tuple[str, ...]]] = {
    "keys": ("IDM0", ("keys.py",)),
    "data_model": ("IDM1", ("data_model.py",)),
    "retry_policy": ("IDM2", ("retry_policy.py",)),
    "external": ("IDM3", ("external.py",)),
    "engine": (None, ("engine.py", "engine_unparsable.py.txt")),
}
RENDER = [
    "check",
    "--isolated",
    "--no-cache",
    "--color",
    "never",
    "--show-source",
    "--jobs",
    "1",
    "--min-confidence",
    "low",
]


def render(family: str, scratch: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """What `idemlint check` prints for the family's inputs, run from a scratch folder."""
    names = []
    for name in FAMILIES[family][1]:
        target = name.removesuffix(".txt")
        shutil.copyfile(INPUTS / name, scratch / target)
        names.append(target)
    monkeypatch.chdir(scratch)
    result = CliRunner().invoke(cli, [*RENDER, *names])
    assert result.exit_code == 1, result.output
    assert result.stderr == ""
    return f"$ idemlint {' '.join(RENDER)} {' '.join(names)}\n{result.stdout}"


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_rendered_snapshot(family: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rendered = render(family, tmp_path, monkeypatch)
    snapshot = SNAPSHOTS / f"{family}.txt"
    if os.environ.get("IDEMLINT_UPDATE_SNAPSHOTS") == "1":
        snapshot.write_text(rendered, encoding="utf-8")
    expected = snapshot.read_text(encoding="utf-8") if snapshot.exists() else ""
    if rendered != expected:
        diff = difflib.unified_diff(
            expected.splitlines(keepends=True),
            rendered.splitlines(keepends=True),
            fromfile=f"tests/snapshots/{family}.txt",
            tofile="rendered",
        )
        pytest.fail(
            "".join(diff) + "\nIf the change is intended: IDEMLINT_UPDATE_SNAPSHOTS=1 pytest tests/test_snapshots.py",
            pytrace=False,
        )


def family_codes(family: str) -> list[str]:
    prefix = FAMILIES[family][0]
    if prefix is None:
        return [UNUSED_SUPPRESSION, PARSE_ERROR]
    return [rule.code for rule in ALL_RULES if rule.code.startswith(prefix)]


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_each_code_of_the_family_is_reported_once(family: str) -> None:
    """Every code of the family, and no other, appears exactly once in its snapshot."""
    text = (SNAPSHOTS / f"{family}.txt").read_text(encoding="utf-8")
    reported = re.findall(r"^\S+:\d+:\d+: (IDM\d{3}) ", text, re.MULTILINE)
    assert sorted(reported) == sorted(family_codes(family))


def test_every_rule_belongs_to_a_family() -> None:
    covered = {code for family in FAMILIES for code in family_codes(family)}
    assert [rule.code for rule in ALL_RULES if rule.code not in covered] == []
