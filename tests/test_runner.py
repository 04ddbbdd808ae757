"""Parallel checking and the result cache: same output whatever the jobs, nothing lost."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from idemlint.config import Config
from idemlint.rules import ALL_RULES
from idemlint.runner import run

from conftest import FIXTURES

FILES = sorted(p for p in FIXTURES.rglob("*.py") if "errors" not in p.parts)


def as_pairs(paths: list[Path]) -> list[tuple[Path, str]]:
    return [(p, p.relative_to(FIXTURES).as_posix()) for p in paths]


def cache_files(cache: Path) -> list[Path]:
    return sorted(cache.rglob("results-*.bin"))


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
    expected = keyed(run(pairs, Config(), ALL_RULES, jobs=1).findings)
    run(pairs, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    other = run(pairs, Config(key_names=("txn_token",)), ALL_RULES, jobs=1, cache_dir=cache)
    assert other.cached == 0
    assert len(cache_files(cache)) == 2  # one per configuration
    intact = cache_files(cache)[0].read_bytes()
    # not the format, cut short, one bit flipped, empty: each is ignored and rebuilt
    for broken in (b"{broken", intact[: len(intact) // 2], intact[:-1] + bytes([intact[-1] ^ 1]), b""):
        for entry in cache_files(cache):
            entry.write_bytes(broken)
        again = run(pairs, Config(), ALL_RULES, jobs=1, cache_dir=cache)
        assert again.cached == 0 and keyed(again.findings) == expected
    assert run(pairs, Config(), ALL_RULES, jobs=1, cache_dir=cache).cached == 3  # rebuilt


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


def age(paths: list[Path], seconds: int = 3600) -> None:
    """Modified an hour ago (the inode's change time stays now)."""
    past = time.time() - seconds
    for path in paths:
        os.utime(path, (past, past))


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs start a minute from now: files written by the test are old enough for their stat
    to be trusted (see idemlint.cache)."""
    import idemlint.cache

    monkeypatch.setattr(idemlint.cache, "clock", lambda: time.time_ns() + 60 * 10**9)


def count_checks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    import idemlint.runner as runner

    checked: list[str] = []
    real = runner.check_source

    def counting(source: bytes, shown: str, *args: object, **kwargs: object) -> object:
        checked.append(shown)
        return real(source, shown, *args, **kwargs)

    monkeypatch.setattr(runner, "check_source", counting)
    return checked


@pytest.fixture
def copied(tmp_path: Path) -> list[tuple[Path, str]]:
    """Three fixture files copied, so a test may edit them."""
    pairs = []
    for path in FILES[:3]:
        copy = tmp_path / "src" / path.name
        copy.parent.mkdir(exist_ok=True)
        copy.write_bytes(path.read_bytes())
        pairs.append((copy, path.name))
    return pairs


def test_an_unchanged_file_is_served_by_its_stat_without_reading_it(
    later: None, copied: list[tuple[Path, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    age([p for p, _ in copied])
    cold = run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    checked = count_checks(monkeypatch)
    read: list[Path] = []
    original = Path.read_bytes

    def reading(self: Path) -> bytes:
        read.append(self)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", reading)
    warm = run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    assert warm.cached == 3 and checked == [] and keyed(warm.findings) == keyed(cold.findings)
    assert [p for p in read if p.suffix == ".py"] == []


def test_an_edited_file_is_rechecked_and_only_it(
    later: None, copied: list[tuple[Path, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    age([p for p, _ in copied])
    run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    checked = count_checks(monkeypatch)
    edited, shown = copied[0]
    stat = edited.stat()
    # same size and the same mtime as before: only the inode's change time tells
    text = edited.read_bytes()
    edited.write_bytes(b"#" * len(text))
    os.utime(edited, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    warm = run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    assert checked == [shown] and warm.cached == 2
    assert [f for f in warm.findings if f.path == shown] == []
    assert keyed(warm.findings) == keyed(run(copied, Config(), ALL_RULES, jobs=1).findings)


def test_a_touched_file_is_hashed_not_rechecked(
    later: None, copied: list[tuple[Path, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "cache"
    age([p for p, _ in copied])
    cold = run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    age([copied[0][0]], seconds=7200)  # a new mtime, the same text
    checked = count_checks(monkeypatch)
    warm = run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    assert checked == [] and warm.cached == 3 and keyed(warm.findings) == keyed(cold.findings)


def test_a_file_changed_just_before_the_run_is_compared_by_content_next_time(
    copied: list[tuple[Path, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An edit in the same clock tick as the read, keeping size and mtime, must not be missed:
    a stat is trusted only for a file changed well before the run that cached it."""
    from idemlint import cache as cache_module

    cache = tmp_path / "cache"
    fresh, shown = copied[0]
    stat = fresh.stat()  # written just now
    run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    (entries,) = [cache_module.ResultCache(cache, salt).entries for salt in run_keys(cache)]
    assert [entry[0] for key, entry in entries.items() if f"\0{shown}\0" in key] == [None]
    fresh.write_bytes(b"#" * stat.st_size)  # same size; pretend the same tick
    os.utime(fresh, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    checked = count_checks(monkeypatch)
    warm = run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache)
    assert checked == [shown] and warm.cached == 2


def run_keys(cache: Path) -> list[str]:
    import marshal

    from idemlint.cache import CHECKSUM_SIZE, MAGIC

    return [marshal.loads(p.read_bytes()[len(MAGIC) + CHECKSUM_SIZE :])[0] for p in cache_files(cache)]


def test_rules_version_and_project_index_are_part_of_the_key(
    later: None, copied: list[tuple[Path, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import idemlint.runner as runner
    from idemlint.analysis.project_index import ProjectIndex

    cache = tmp_path / "cache"
    age([p for p, _ in copied])
    assert run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache).cached == 0
    assert run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache).cached == 3
    assert run(copied, Config(), ALL_RULES[:2], jobs=1, cache_dir=cache).cached == 0
    helper = ProjectIndex(guarded_setters=frozenset({"set_status"}))
    assert run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache, project=helper).cached == 0
    assert run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache, project=helper).cached == 3
    monkeypatch.setattr(runner, "__version__", "99.0")
    assert run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache).cached == 0
    # the path as shown, its kind and its root-relative path are part of an entry's key
    renamed = [(real, f"other/{shown}") for real, shown in copied]
    assert run(renamed, Config(), ALL_RULES, jobs=1, cache_dir=cache).cached == 0
    kinds = {shown: "test" for _, shown in copied}
    assert run(copied, Config(), ALL_RULES, jobs=1, cache_dir=cache, kinds=kinds).cached == 0


def test_concurrent_runs_merge_their_entries_and_leave_no_temporary_files(
    copied: list[tuple[Path, str]], tmp_path: Path
) -> None:
    from idemlint.cache import ResultCache, content_hash

    cache = tmp_path / "cache"
    first, second = ResultCache(cache, "salt"), ResultCache(cache, "salt")  # both read an empty cache
    for opened, (real, shown) in ((first, copied[0]), (second, copied[1])):
        assert opened.lookup(shown, real)[0] is None
        opened.put(shown, None, content_hash(real.read_bytes()), [])
    first.save()
    second.save()
    merged = ResultCache(cache, "salt")
    assert sorted(merged.entries) == sorted([copied[0][1], copied[1][1]])
    assert merged.lookup(copied[0][1], copied[0][0])[0] == []
    assert [p.name for p in cache.rglob("*") if p.is_file() and p.name != ".gitignore"] == [merged.path.name]


def test_the_project_index_is_rebuilt_only_when_a_file_or_the_key_changes(
    later: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    from idemlint.analysis.project import build_index
    from idemlint.cache import cached_index

    project = tmp_path / "project"
    shutil.copytree(FIXTURES.parent / "data" / "project_index", project)
    files = sorted(project.rglob("*.py"))
    cache = tmp_path / "cache"
    builds: list[int] = []

    def build(paths: list[str], read: Callable[[Path], bytes]) -> object:
        builds.append(len(paths))
        return build_index([Path(p) for p in paths], read=read)

    def index(key: str = "config", paths: list[Path] = files) -> object:
        return cached_index([str(p) for p in paths], cache, key, build)  # type: ignore[arg-type]

    import idemlint.cache as cache_module

    reads: list[str] = []
    read_source = cache_module.read_source
    monkeypatch.setattr(cache_module, "read_source", lambda path: reads.append(Path(path).name) or read_source(path))
    first = index()
    assert sorted(r for r in reads if r.endswith(".py")) == sorted(f.name for f in files)  # each file read once
    monkeypatch.setattr(cache_module, "read_source", read_source)
    assert first == build_index(files) and first.guarded_setters == frozenset({"set_status"})  # type: ignore[attr-defined]
    assert index() == first and builds == [len(files)]
    age(files, seconds=7200)  # touched: compared by content, not rebuilt
    assert index() == first and index() == first and len(builds) == 1
    assert index(key="other") == first and len(builds) == 2
    assert index(paths=files[:-1]) == build_index(files[:-1]) and len(builds) == 3
    models = project / "shop" / "models.py"
    models.write_text(models.read_text().replace("        if self.complete:\n            return\n", ""))
    edited = index()
    assert len(builds) == 4 and edited == build_index(files) and edited.guarded_setters == frozenset()  # type: ignore[attr-defined]
    for stored in cache.rglob("index-*.bin"):
        stored.write_bytes(stored.read_bytes()[:-1])
    assert index() == edited and len(builds) == 5
    assert cached_index([str(f) for f in files], None, "config", build) == edited and len(builds) == 6  # type: ignore[arg-type]


def test_the_index_is_the_same_mapped_in_workers_as_in_this_process(tmp_path: Path) -> None:
    """Modules that need a libcst parse go to worker processes as they are read, while the
    rest are mapped here; the index must not depend on it (nor on the order they finish)."""
    from idemlint.analysis.project import build_index
    from idemlint.runner import MIN_FILES_FOR_POOL, map_in_workers

    for n in range(MIN_FILES_FOR_POOL + 2):  # enough candidates for a pool, and plain modules between them
        (tmp_path / f"client_{n}.py").write_text(
            "import requests\n\n\n"
            f"def send_{n}(payload):\n"
            f"    return requests.post('https://api.example/{n}', json=payload)\n"
        )
        (tmp_path / f"plain_{n}.py").write_text(f"def add_{n}(a, b):\n    return a + b\n")
    files = sorted(tmp_path.glob("*.py"))
    config = Config(root=tmp_path)
    here = build_index(files, tmp_path, config)
    pooled = build_index(files, tmp_path, config, mapper=map_in_workers)
    assert pooled == here
    assert sorted(name for name, (summary, _path, _line) in here.functions.items() if summary.effect) == sorted(
        f"client_{n}.send_{n}" for n in range(MIN_FILES_FOR_POOL + 2)
    )
