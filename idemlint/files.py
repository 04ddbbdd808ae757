"""Which files to check: Python files under the given paths, minus excluded and ignored ones."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from idemlint.config import Config
from idemlint.paths import SOURCE, TEST, PathKinds

PYTHON_SUFFIXES = (".py", ".pyi")


@dataclass
class Discovery:
    files: list[tuple[Path, str]] = field(default_factory=list)  # (real path, path as shown)
    errors: list[str] = field(default_factory=list)
    # Path as shown -> test, migration or "" (source), judged from the project root. A file
    # named on the command line is checked as source whatever its name, as ruff and flake8 do.
    kinds: dict[str, str] = field(default_factory=dict)
    # Path as shown -> path relative to the project root: what baselines, per-file-ignores,
    # fingerprints and SARIF/GitHub locations use, whatever folder idemlint runs from.
    anchors: dict[str, str] = field(default_factory=dict)

    def skipped_tests(self, check_tests: bool) -> list[tuple[Path, str]]:
        return [] if check_tests else [f for f in self.files if self.kinds.get(f[1]) == TEST]

    def to_check(self, check_tests: bool) -> list[tuple[Path, str]]:
        skipped = {shown for _, shown in self.skipped_tests(check_tests)}
        return [f for f in self.files if f[1] not in skipped]


def display_path(path: Path, cwd: Path) -> str:
    try:
        shown = path.relative_to(cwd)
    except ValueError:
        shown = path
    return shown.as_posix()


def discover(
    paths: list[str], config: Config, force_exclude: bool = False, respect_gitignore: bool = True
) -> Discovery:
    import pathspec

    cwd = Path.cwd()
    found = Discovery()
    excludes = pathspec.GitIgnoreSpec.from_lines([*config.exclude, *config.extend_exclude])
    seen: set[str] = set()
    kinds = PathKinds(config.root)

    def excluded(path: Path) -> bool:
        try:
            relative = path.relative_to(config.root)
        except ValueError:
            relative = Path(path.name)
        text = relative.as_posix() + ("/" if path.is_dir() else "")
        return excludes.match_file(text)

    def add(path: Path, explicit: bool = False) -> None:
        try:
            key = os.path.normcase(os.path.realpath(path))  # a symlink and its target are one file
        except OSError:
            key = os.path.normcase(str(path))
        if key not in seen:
            seen.add(key)
            shown = display_path(path, cwd)
            found.files.append((path, shown))
            found.kinds[shown] = SOURCE if explicit else kinds.kind(path)
            found.anchors[shown] = kinds.relative(path) or shown

    for given in paths:
        path = Path(given)
        absolute = path if path.is_absolute() else cwd / path
        problem = _unusable(absolute)
        if problem:
            found.errors.append(f"{given}: {problem}")
            continue
        if absolute.is_file():
            if not (force_exclude and excluded(absolute)):
                # named files are checked whatever their name, unless excludes apply to them too
                # (`--force-exclude`, as the pre-commit hooks pass): then test files are skipped too
                add(absolute, explicit=not force_exclude)
            continue
        ignores = _GitIgnores(absolute if respect_gitignore else None)
        for directory, dirnames, filenames in os.walk(
            absolute, onerror=lambda e: found.errors.append(f"{e.filename}: {e.strerror}")
        ):
            here = Path(directory)
            ignores.enter(here)
            dirnames[:] = sorted(d for d in dirnames if not excluded(here / d) and not ignores.ignored(here / d, True))
            for filename in sorted(filenames):
                if filename.endswith(PYTHON_SUFFIXES):
                    file = here / filename
                    if not excluded(file) and not ignores.ignored(file, False):
                        add(file)
    found.files.sort(key=lambda item: item[1])
    return found


def _unusable(path: Path) -> str | None:
    """Why a path given on the command line cannot be checked, in a few words, or None."""
    try:
        path.stat()
    except OSError as error:
        import errno

        if error.errno == errno.ELOOP:
            return "symlink loop"
        if error.errno == errno.ENOENT:
            return "no such file or directory"
        return (error.strerror or str(error)).lower()
    return None


class _GitIgnores:
    """The .gitignore files that apply below a directory, from its repository root down."""

    def __init__(self, start: Path | None) -> None:
        import pathspec

        self._pathspec = pathspec
        self.specs: dict[Path, object] = {}
        self.enabled = start is not None
        if start is None:
            return
        root = next((p for p in (start, *start.parents) if (p / ".git").exists()), None)
        if root is not None:
            chain = [start, *start.parents]
            for directory in reversed(chain[: chain.index(root) + 1]):
                self.enter(directory)

    def enter(self, directory: Path) -> None:
        if not self.enabled or directory in self.specs:
            return
        gitignore = directory / ".gitignore"
        if gitignore.is_file():
            try:
                lines = gitignore.read_text(encoding="utf-8", errors="replace").splitlines()
            except OSError:
                return
            self.specs[directory] = self._pathspec.GitIgnoreSpec.from_lines(lines)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        for base, spec in self.specs.items():
            try:
                relative = path.relative_to(base).as_posix()
            except ValueError:
                continue
            if spec.match_file(relative + ("/" if is_dir else "")):  # type: ignore[attr-defined]
                return True
        return False
