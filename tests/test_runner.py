"""Parallel checking and the result cache: same output whatever the jobs, nothing lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from idemlint.config import Config
from idemlint.rules import ALL_RULES
from idemlint.runner import run

from conftest import FIXTURES

FILES = sorted(p for p in FIXTURES.rglob("*.py") if "errors" not in p.parts)


def as_pairs(paths: list[Path]) -> list[tuple[Path, str]]:
    return [(p, p.relative_to(FIXTURES).as_posix()) for p in paths]


def keyed(findings: list) -> list[tuple[str, int, int, str, str]]:  # type: ignore[type-arg]
    return [(f.path, f.line, f.col, f.code, f.message) for f in findings]


def test_results_are_identical_for_any_jobs_and_file_order() -> None:
    one = run(as_pairs(FILES), Config(), ALL_RULES, jobs=1)
    two = run(as_pairs(list(reversed(FILES))), Config(), ALL_RULES, jobs=2)
    assert len(FILES) >= 8 and one.findings
    assert keyed(one.findings) == keyed(two.findings)
    assert one.errors == two.errors == []


def test_warm_cache_returns_the_same_findings_without_analysing(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cold = run(as_pairs(FILES), Config(), ALL_RULES, jobs=1, cache_dir=cache)
    warm = run(as_pairs(FILES), Config(), ALL_RULES, jobs=1, cache_dir=cache)
    assert cold.cached == 0 and warm.cached == len(FILES)
    assert keyed(cold.findings) == keyed(warm.findings)
    assert (cache / ".gitignore").read_text().endswith("*\n")


def test_cache_is_keyed_on_configuration_and_survives_corruption(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    pairs = as_pairs(FILES[:3])
    run(pairs, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    other = run(pairs, Config(key_names=("txn_token",)), ALL_RULES, jobs=1, cache_dir=cache)
    assert other.cached == 0
    for entry in cache.rglob("*.json"):
        entry.write_text("{broken")
    again = run(pairs, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    assert again.cached == 0 and keyed(again.findings) == keyed(run(pairs, Config(), ALL_RULES, jobs=1).findings)


def test_unreadable_file_is_an_error_and_the_others_are_checked(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        missing = tmp_path / "gone.py"  # root reads everything: use a path that vanished instead
    else:  # pragma: no cover - CI runs as root
        missing = tmp_path / "locked.py"
        missing.write_text("x = 1\n")
        missing.chmod(0)
    result = run([(missing, "gone.py"), *as_pairs(FILES[:1])], Config(), ALL_RULES, jobs=1)
    assert result.errors and result.errors[0].startswith("gone.py: cannot read")
    assert result.findings


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork to kill a worker")
def test_a_worker_that_dies_loses_only_its_own_file(monkeypatch: pytest.MonkeyPatch) -> None:
    import idemlint.runner as runner

    import crash_helper

    monkeypatch.setattr(runner, "_check_one", crash_helper.crash_on_marker)
    poison = FIXTURES.parent / "data" / "poison.py"
    poison.write_text("# KILL_THE_WORKER\n")
    try:
        result = run([(poison, "poison.py"), *as_pairs(FILES)], Config(), ALL_RULES, jobs=2)
    finally:
        poison.unlink()
    crashed = [f for f in result.findings if f.path == "poison.py"]
    assert [(f.code, f.line) for f in crashed] == [("IDM900", 1)]
    assert "crashed" in crashed[0].message
    expected = run(as_pairs(FILES), Config(), ALL_RULES, jobs=1)
    assert keyed([f for f in result.findings if f.path != "poison.py"]) == keyed(expected.findings)


def test_an_engine_bug_on_one_file_is_an_internal_error_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import idemlint.runner as runner

    def broken(*args: object, **kwargs: object) -> object:
        raise KeyError("boom")

    monkeypatch.setattr(runner, "check_source", broken)
    (tmp_path / "a.py").write_text("x = 1\n")
    result = run([(tmp_path / "a.py", "a.py")], Config(), ALL_RULES, jobs=1)
    assert result.findings == []
    (message,) = result.errors
    assert message.startswith("a.py: internal error: KeyError: 'boom' [")
