"""The warm path's shortcuts give what the plain computations give.

Discovery resolves each folder once (paths.Resolver), matches excludes and .gitignore files
with a quick first test (files._Spec), and the project index's walk skips kinds and
anchors (`judge=False`); each is pinned here against the computation it replaces.
"""

from __future__ import annotations

import os
from pathlib import Path

import pathspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from idemlint import api
from idemlint.config import DEFAULT_EXCLUDES, Config
from idemlint.files import _GitIgnores, _Spec, discover
from idemlint.paths import PathKinds, Resolver, project_root, resolved

GITIGNORE = [
    "*.py[cod]",
    ".*",
    "!.github",
    "!.semgrep/",
    ".claude",
    "!.claude/skills/",
    "__pycache__/",
    "build/",
    "/media/",
    "env/",
    "*\\.egg*",
    "!keep_*.py",
    "gen/**/*.py",
    "a/**/b",
    "local_settings.py",
]

segment = st.sampled_from(
    ["a", "b", "build", "env", ".env", ".github", ".claude", "skills", "media", "gen", "x.py", "keep_1.py"]
    + ["local_settings.py", "y.pyc", "pkg.egg-info", "__pycache__", "src", ".semgrep", "tests"]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(segment, min_size=1, max_size=5), st.booleans(), st.sampled_from(["", "/", "./"]))
def test_spec_matches_as_pathspec_does(parts: list[str], is_dir: bool, lead: str) -> None:
    text = lead + "/".join(parts) + ("/" if is_dir else "")
    for lines in (GITIGNORE, list(DEFAULT_EXCLUDES), ["build", "!build/keep.py"], []):
        assert _Spec(lines).match(text) == pathspec.GitIgnoreSpec.from_lines(lines).match_file(text), (lines, text)


def _tree(root: Path) -> None:
    for name in (
        "pkg/a.py",
        "pkg/tests/test_a.py",
        "pkg/migrations/0001.py",
        "pkg/build/gen.py",
        "pkg/.hidden/h.py",
        "media/m.py",
        "docs/conf.py",
        "integration/conftest.py",
        "integration/check.py",
        "keep_1.py",
        "y.pyc",
    ):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x = 1\n")
    (root / ".git").mkdir()
    (root / ".gitignore").write_text("\n".join(GITIGNORE) + "\n")
    (root / "pkg" / ".gitignore").write_text("a.py\n")
    (root / "linked").symlink_to(root / "pkg")
    (root / "alias.py").symlink_to(root / "keep_1.py")
    (root / "loop.py").symlink_to(root / "loop.py")


def test_resolver_gives_what_resolve_and_realpath_give(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path / "pkg")
    resolver = Resolver()
    names = ["a.py", "../keep_1.py", "../alias.py", "../loop.py", "../linked/a.py", "missing.py", "..", ".", ""]
    for name in [*names, *(str(tmp_path / n) for n in ("linked/tests/test_a.py", "alias.py", "loop.py", "nope/x"))]:
        path = Path(name)
        assert resolver.resolved(path) == resolved(path), name
        assert resolver.resolved_text(path) == str(resolved(path)), name
        assert resolver.realpath(path) == os.path.realpath(path), name


def _plain_kinds(root: Path, path: Path) -> tuple[str, str | None]:
    """What PathKinds judged before it had a Resolver: resolve both, relative_to."""
    try:
        relative: str | None = resolved(path).relative_to(resolved(root)).as_posix()
    except ValueError:
        relative = None
    return PathKinds(root).kind(path), relative


def test_discovery_judges_files_as_a_plain_resolution_does(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    config = Config(root=tmp_path)
    found = discover(["."], config)
    assert found.files
    kinds = PathKinds(tmp_path)
    for path, shown in found.files:
        assert (found.kinds[shown], found.anchors[shown]) == (kinds.kind(path), kinds.relative(path) or shown)
        kind, relative = _plain_kinds(tmp_path, path)
        assert found.kinds[shown] == kind
        assert found.anchors[shown] == (relative or shown)
        assert shown == (path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path).as_posix()


def test_walk_without_judging_finds_the_same_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path / "pkg")
    config = Config(root=tmp_path)
    judged, plain = discover([str(tmp_path)], config), discover([str(tmp_path)], config, judge=False)
    assert plain.files == judged.files
    assert plain.errors == judged.errors
    assert (plain.kinds, plain.anchors) == ({}, {})
    names = {shown for _path, shown in judged.files}
    assert "a.py" not in names  # pkg/.gitignore
    assert "../media/m.py" not in names  # /media/ in the root's .gitignore
    assert "build/gen.py" not in names  # default excludes


def test_gitignore_matcher_agrees_with_ignored(tmp_path: Path) -> None:
    _tree(tmp_path)
    ignores = _GitIgnores(tmp_path / "pkg")
    ignores.enter(tmp_path / "pkg")
    for folder in (tmp_path, tmp_path / "pkg", tmp_path / "pkg" / "tests", tmp_path / "media"):
        matcher = ignores.matcher(folder)
        for name in ("a.py", "m.py", "build", ".claude", "skills", "keep_1.py", "x.pyc"):
            for is_dir in (False, True):
                expected = any(
                    spec.spec.match_file((folder / name).relative_to(base).as_posix() + ("/" if is_dir else ""))
                    for base, spec in ignores.specs.items()
                    if (folder / name).is_relative_to(base)
                )
                assert matcher(name, is_dir) == expected == ignores.ignored(folder / name, is_dir)


def test_project_files_equal_a_fresh_walk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The files the project index reads: a fresh walk of the root, then named files outside
    it, whether the run names the root, a few files, or a folder inside it."""
    _tree(tmp_path)
    monkeypatch.chdir(tmp_path)
    config = Config(root=tmp_path)
    fresh = [path for path, _shown in discover([str(tmp_path)], config).files]
    for paths in (["."], [str(tmp_path)], ["pkg/tests/test_a.py", "docs/conf.py"], ["pkg"]):
        found = discover(paths, config)
        files = api.project_files(config, found, paths)
        assert files == list(dict.fromkeys([*map(str, fresh), *(str(path) for path, _ in found.files)])), paths
        assert set(files) >= set(map(str, fresh))


def test_project_root_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "one" / "a").mkdir(parents=True)
    (tmp_path / "one" / "b").mkdir()
    (tmp_path / "one" / "a" / "x.py").write_text("")
    (tmp_path / "one" / "b" / "y.py").write_text("")
    monkeypatch.chdir(tmp_path / "one")
    assert project_root(["a/x.py", "b/y.py"], None) == tmp_path / "one"
    assert project_root(["a/x.py"], None) == tmp_path / "one" / "a"
    assert project_root(["a", "a/x.py"], None) == tmp_path / "one" / "a"
    (tmp_path / ".git").mkdir()
    assert project_root(["a/x.py", "b/y.py"], None) == tmp_path
