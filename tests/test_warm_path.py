"""The warm path (every file served by the cache) reports exactly what a cold run reports.

A warm run imports no rule class (idemlint.rule_table stands in for them), reads the project
index's digest instead of the index, lists the project's files from a listing kept while no
folder changed, and matches plain-name excludes without pathspec; each shortcut is pinned
here against the computation it replaces, or against a cold run's findings.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pathspec
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from idemlint import api, cache
from idemlint.cli import cli
from idemlint.config import Config
from idemlint.files import _joined, _Spec, discover
from idemlint.paths import Resolver, project_root
from idemlint.registry import enabled_rows, enabled_rules
from idemlint.rule_table import RULE_TABLE
from idemlint.rules import ALL_RULES

PROJECT = Path(__file__).parent / "data" / "project_index"
UNGUARDED = "class Other:\n    def set_status(self, status):\n        self.status = status\n        self.save()\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy)
    monkeypatch.chdir(copy)
    # everything on disk is old enough for its stat to be trusted (see cache.RACY_NS)
    monkeypatch.setattr(cache, "clock", lambda: time.time_ns() + 10_000_000_000)
    return copy


def findings(*args: str) -> list[tuple[str, int, str]]:
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--exit-zero", "--min-confidence", "low", *args])
    assert result.exit_code == 0, result.output
    return [(f["path"], f["line"], f["code"]) for f in json.loads(result.stdout)]


def served_warm(monkeypatch: pytest.MonkeyPatch, *args: str) -> list[tuple[str, int, str]]:
    """The findings of a run that must come from the warm path alone."""
    with monkeypatch.context() as patch:
        patch.setattr(api, "check_files", lambda *a, **k: pytest.fail("the warm path missed"))
        patch.setattr(api, "build_project_index", lambda *a, **k: pytest.fail("the index was loaded"))
        return findings(*args)


def test_the_rule_table_is_what_the_rule_classes_say() -> None:
    assert list(RULE_TABLE) == [(r.code, r.name, r.needs_project) for r in ALL_RULES]
    for select, ignore in [((), ()), (("IDM1",), ()), (("ALL",), ("IDM10", "IDM3")), (("IDM001", "IDM2"), ("IDM2",))]:
        assert [r.code for r in enabled_rows(select, ignore)] == [r.code for r in enabled_rules(select, ignore)]


def test_a_warm_run_imports_no_rule_analysis_or_pathspec(project: Path, tmp_path: Path) -> None:
    env = {**os.environ, "IDEMLINT_CACHE_DIR": str(tmp_path / "cache")}
    command = [
        sys.executable,
        "-m",
        "idemlint",
        "check",
        "--exit-zero",
        "-q",
        "--min-confidence",
        "low",
        "jobs/tasks.py",
    ]
    import subprocess

    first = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    probe = (
        "import sys, runpy\nsys.argv = ['idemlint', 'check', '--exit-zero', '-q', '--min-confidence', 'low', 'jobs/tasks.py']\n"
        "try:\n    runpy.run_module('idemlint', run_name='__main__')\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith(('idemlint.rules', 'libcst', 'sqlglot', 'pathspec'))))"
    )
    second = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True)
    assert second.stdout.endswith("[]\n")
    assert second.stdout[: -len("[]\n")] == first.stdout
    assert "jobs/tasks.py:10" in first.stdout


def test_a_warm_run_reports_what_a_cold_run_reports(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cold = findings("--no-cache")
    assert cold == [("jobs/tasks.py", 10, "IDM103")]
    assert findings() == cold  # fills the cache
    assert served_warm(monkeypatch) == cold


def test_a_new_project_file_is_seen_by_a_warm_one_file_run(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    named = "jobs/tasks.py"
    assert findings(named) == [(named, 10, "IDM103")]
    assert served_warm(monkeypatch, named) == [(named, 10, "IDM103")]
    assert list((Path(os.environ["IDEMLINT_CACHE_DIR"])).rglob("listing-*.bin"))
    # a helper module nobody names makes set_status unguarded: the caller's line 5 is reported
    (project / "shop" / "other.py").write_text(UNGUARDED)
    expected = findings("--no-cache", named)
    assert expected == [(named, 5, "IDM103"), (named, 10, "IDM103")]
    assert findings(named) == expected
    assert served_warm(monkeypatch, named) == expected
    # a .gitignore that appears, then one edited in place (its folder's stat unchanged)
    ignore = project / "shop" / ".gitignore"
    ignore.write_text("# nothing yet\n")
    assert findings(named) == findings("--no-cache", named) == expected
    with open(ignore, "r+") as handle:
        handle.write("other.py\n")
    assert findings(named) == findings("--no-cache", named) == [(named, 10, "IDM103")]
    # and the file removed again
    (project / "shop" / "other.py").unlink()
    ignore.unlink()
    assert findings(named) == findings("--no-cache", named) == [(named, 10, "IDM103")]


def test_runs_on_files_beyond_the_listing_keep_an_index_each(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Files named in an excluded folder are indexed beyond the root's listing: a run on one of
    them does not replace the index a run on another stored (each would rebuild it)."""
    (project / "build").mkdir()
    shutil.copy(project / "jobs" / "tasks.py", project / "build" / "one.py")
    (project / "build" / "two.py").write_text("def other():\n    return 2\n")
    first = findings("build/one.py")
    assert first == [("build/one.py", 10, "IDM103")]
    assert findings("build/two.py") == []
    assert served_warm(monkeypatch, "build/one.py") == first
    stores = Path(os.environ["IDEMLINT_CACHE_DIR"])
    assert len(list(stores.rglob("index-*.bin"))) == 2
    for number in range(cache.MAX_FILES):  # the least recently used stores go; a hit is a use
        (project / "build" / f"more{number}.py").write_text("X = 1\n")
        assert findings(f"build/more{number}.py") == []
        assert served_warm(monkeypatch, "build/one.py") == first
    assert len(list(stores.rglob("index-*.bin"))) == cache.MAX_FILES
    assert served_warm(monkeypatch, f"build/more{cache.MAX_FILES - 1}.py") == []


def test_the_root_and_a_file_beyond_it_keep_an_index_apart_from_the_root_alone(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "build").mkdir()
    shutil.copy(project / "jobs" / "tasks.py", project / "build" / "one.py")
    alone = findings(".")
    both = findings(".", "build/one.py")
    assert both == [("build/one.py", 10, "IDM103"), *alone]
    assert served_warm(monkeypatch, ".") == alone
    assert served_warm(monkeypatch, ".", "build/one.py") == both


def test_a_root_file_named_through_dot_dot_shares_the_root_index(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from idemlint.analysis import project as index_builder

    monkeypatch.chdir(project / "shop")
    assert findings("../jobs/tasks.py") == [("../jobs/tasks.py", 10, "IDM103")]
    monkeypatch.setattr(index_builder, "build_index", lambda *a, **k: pytest.fail("the index was built again"))
    assert findings(str(project / "jobs" / "tasks.py")) == [(str(project / "jobs" / "tasks.py"), 10, "IDM103")]
    assert len(list(Path(os.environ["IDEMLINT_CACHE_DIR"]).rglob("index-*.bin"))) == 1


def test_the_listing_follows_new_and_removed_folders(project: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    config = api.load_config(["."])
    for change in (
        lambda: (project / "pkg" / "deep").mkdir(parents=True),
        lambda: (project / "pkg" / "deep" / "new.py").write_text("x = 1\n"),
        lambda: (project / "pkg" / "build").mkdir(),
        lambda: (project / "pkg" / "build" / "skipped.py").write_text("x = 1\n"),
        lambda: shutil.rmtree(project / "pkg" / "deep"),
        lambda: (project / "jobs" / "tasks.py").rename(project / "jobs" / "renamed.py"),
    ):
        change()
        assert api.project_files(config, cache_dir=store) == api.project_files(config)
        assert api.project_files(config, cache_dir=store) == api.project_files(config)
    assert sorted(Path(p).name for p in api.project_files(config, cache_dir=store)) == ["models.py", "renamed.py"]
    assert list(store.rglob("listing-*.bin"))  # the listing was kept, and followed every change


def test_a_listing_with_a_symlink_is_walked_every_time(project: Path, tmp_path: Path) -> None:
    (project / "linked").symlink_to(project / "shop", target_is_directory=True)
    (project / "alias.py").symlink_to(project / "shop" / "models.py")
    config, store = api.load_config(["."]), tmp_path / "store"
    assert api.project_files(config, cache_dir=store) == api.project_files(config)
    assert not list(store.rglob("listing-*.bin"))


plain_name = st.from_regex(r"[a-z._-]{1,6}", fullmatch=True).filter(lambda n: n.strip("."))
part = st.one_of(plain_name, st.sampled_from(["build", ".git", "a", "x.py", "", "."]))


@settings(max_examples=500, deadline=None)
@given(st.lists(plain_name, min_size=1, max_size=4), st.lists(part, min_size=1, max_size=4), st.booleans())
def test_plain_names_match_as_pathspec_matches_them(names: list[str], parts: list[str], is_dir: bool) -> None:
    spec = _Spec(names)
    assert spec._names is not None  # the quick matcher, no pathspec
    for lead in ("", "/", "./"):
        text = lead + "/".join(parts) + ("/" if is_dir else "")
        assert spec.match(text) == bool(pathspec.GitIgnoreSpec.from_lines(names).match_file(text)), (names, text)


def test_names_that_are_not_plain_go_to_pathspec() -> None:
    for lines in (["*.py"], ["build/"], ["!keep"], ["#c"], ["a b"], ["."], [".."], ["a\\b"], [""], ["x", "y/z"]):
        assert _Spec(lines)._names is None, lines


@pytest.mark.parametrize("cwd", ["/w", "/w/p", "/"], ids=["top", "nested", "root"])
@pytest.mark.parametrize(
    "given",
    [
        "a.py",
        "./a.py",
        "././a/b.py",
        "a//b.py",
        "a/./b.py",
        "a/../b.py",
        "/abs/x.py",
        "//abs/x.py",
        "a/",
        "a/.",
        ".",
        "",
        "..",
        ".hidden.py",
    ],
)
def test_joined_text_is_what_pathlib_gives(cwd: str, given: str) -> None:
    text = _joined(cwd, given)
    if text is not None:
        assert text == str(Path(cwd) / given)


def _tree(root: Path) -> list[str]:
    for name in ("pkg/a.py", "pkg/tests/test_b.py", "other/c.py", "pkg/migrations/0001_x.py", "real/d.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x = 1\n")
    (root / "pkg" / "link.py").symlink_to(root / "real" / "d.py")
    (root / "linkdir").symlink_to(root / "real", target_is_directory=True)
    return [
        "pkg/a.py", "./pkg/a.py", "pkg//tests/test_b.py", "pkg/./migrations/0001_x.py", "other/../pkg/a.py",
        "pkg/link.py", "linkdir/d.py", "missing.py", "pkg", str(root / "other" / "c.py"),
    ]  # fmt: skip


@pytest.mark.parametrize("force_exclude", [False, True])
def test_named_files_are_judged_as_the_full_resolution_judges_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, force_exclude: bool
) -> None:
    paths = _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    config = Config(root=tmp_path, extend_exclude=("other",))
    quick = discover(paths, config, force_exclude)
    with monkeypatch.context() as patch:
        patch.setattr("idemlint.files._joined", lambda cwd, given: None)
        full = discover(paths, config, force_exclude)
    assert (quick.files, quick.kinds, quick.anchors, quick.errors) == (
        full.files,
        full.kinds,
        full.anchors,
        full.errors,
    )
    assert quick.files and quick.errors


def test_the_project_root_is_the_common_folder_of_the_resolved_paths(tmp_path: Path) -> None:
    paths = _tree(tmp_path)
    given = [str(tmp_path / p) for p in paths if p != "missing.py"] + ["missing.py"]
    resolver = Resolver()
    absolute = [resolver.resolved_text(Path(p)) for p in given]
    folders = {p if os.path.isdir(p) else os.path.dirname(p) for p in absolute}
    assert project_root(given, None) == Path(os.path.commonpath(list(folders)))
    assert project_root(given[-2:-1], None) == tmp_path / "other"
    assert project_root([str(tmp_path / "linkdir" / "d.py")], None) == tmp_path / "real"


def test_the_index_format_is_pinned_to_its_magic() -> None:
    """A stored index is read back by its field names and types: when what it holds changes (a
    field of the index, a file's facts or a summary, how machines are declared), INDEX_MAGIC
    must change with it, or a warm run reuses an index built the old way. Update both pins
    together. Which modules are summarised (the summary signs, derived from the catalogue) is
    in the index's key instead: see the next test."""
    import dataclasses
    import hashlib

    from idemlint.analysis import machines
    from idemlint.analysis.module_facts import ModuleFacts
    from idemlint.analysis.project import FileFacts
    from idemlint.analysis.project_index import ProjectIndex
    from idemlint.analysis.summary_records import Summary
    from idemlint.cache import INDEX_MAGIC

    classes = (ProjectIndex, FileFacts, ModuleFacts, Summary, machines.Machine)
    shape = repr([[f.name for f in dataclasses.fields(c)] for c in classes]) + repr(
        [machines._TABLE_ROW.pattern, machines._DECORATOR.pattern]
    )
    assert (INDEX_MAGIC, hashlib.sha256(shape.encode()).hexdigest()[:12]) == (b"idemlint-index-64\n", "628aadc0c44e")


def test_the_index_key_follows_the_catalogue_and_the_summary_signs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Teaching idemlint a library (an edit of idemlint/knowledge/ alone) builds the index
    again and re-checks files: the catalogue's digest is in the index's key, and the summary
    signs derived from it too."""
    from idemlint import api, knowledge
    from idemlint.analysis import project
    from idemlint.config import Config

    config = Config()
    before = api._index_key(config)
    assert api._index_key(config) == before
    monkeypatch.setattr(project, "SIGNS_DIGEST", "other signs")
    assert api._index_key(config) != before
    monkeypatch.undo()
    monkeypatch.setattr(knowledge, "catalogue_digest", lambda: "other words")
    assert api._index_key(config) != before


def test_the_result_cache_key_follows_the_catalogue(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A word taught to the catalogue re-checks every file: its digest is in the run-wide key."""
    from idemlint import runner
    from idemlint.config import Config
    from idemlint.rules import ALL_RULES

    config = Config(root=tmp_path)
    first = runner._open_cache(tmp_path, config, ALL_RULES, ("structure", {}))
    assert runner._open_cache(tmp_path, config, ALL_RULES, ("structure", {})).salt == first.salt
    monkeypatch.setattr(runner, "catalogue_digest", lambda: "other words")
    assert runner._open_cache(tmp_path, config, ALL_RULES, ("structure", {})).salt != first.salt
