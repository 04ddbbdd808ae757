"""Which files to check: Python files under the given paths, minus excluded and ignored ones."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from idemlint.config import Config, too_many_wildcards
from idemlint.paths import SOURCE, TEST, PathKinds, Resolver
from idemlint.printable import printable
from idemlint.reading import link_problem

if TYPE_CHECKING:
    import pathspec

PYTHON_SUFFIXES = (".py", ".pyi")
_GROUP_NAME = re.compile(r"\(\?P<(\w+)>")
_BACKREFERENCE = re.compile(r"\\\d")
# a gitignore pattern that is a name alone: no wildcard, slash, negation, escape or comment
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_.-]*[A-Za-z0-9_-][A-Za-z0-9_.-]*")


@dataclass
class Discovery:
    # (real path, path as shown), as text: a warm run compares thousands and needs no Path
    entries: list[tuple[str, str]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # Path as shown -> test, migration or "" (source), judged from the project root. A file
    # named on the command line is checked as source whatever its name, as ruff and flake8 do.
    kinds: dict[str, str] = field(default_factory=dict)
    # Path as shown -> path relative to the project root: what baselines, per-file-ignores,
    # fingerprints and SARIF/GitHub locations use, whatever folder idemlint runs from.
    anchors: dict[str, str] = field(default_factory=dict)
    walked: list[str] = field(default_factory=list)  # the paths given that were walked as folders
    # What a walk's result depends on, for idemlint.cache.cached_listing: the folders walked and
    # the .gitignore files that applied (or could appear); `plain` is False once a symlink or
    # an unreadable folder was met (a listing that their targets could change is not cached).
    watched: list[str] = field(default_factory=list)
    plain: bool = True
    # files not read, and why (links to outside the root or to devices): one warning line each
    skipped: list[str] = field(default_factory=list)
    # the run's path resolutions, which later steps (the project's listing) share
    resolver: Resolver = field(default_factory=Resolver)

    @cached_property
    def files(self) -> list[tuple[Path, str]]:
        """(real path, path as shown) of every file found."""
        return [(Path(real), shown) for real, shown in self.entries]

    def skipped_tests(self, check_tests: bool) -> list[tuple[Path, str]]:
        return [] if check_tests else [f for f in self.files if self.kinds.get(f[1]) == TEST]

    def to_check(self, check_tests: bool) -> list[tuple[Path, str]]:
        skipped = {shown for _, shown in self.skipped_tests(check_tests)}
        return [f for f in self.files if f[1] not in skipped]

    def to_check_text(self, check_tests: bool) -> list[tuple[str, str]]:
        """`to_check` as text (real path, path as shown)."""
        kinds = self.kinds
        return [e for e in self.entries if check_tests or kinds.get(e[1]) != TEST]


def display_path(path: Path, cwd: Path) -> str:
    try:
        shown = path.relative_to(cwd)
    except ValueError:
        shown = path
    return shown.as_posix()


def discover(
    paths: list[str],
    config: Config,
    force_exclude: bool = False,
    respect_gitignore: bool = True,
    judge: bool = True,
    resolver: Resolver | None = None,
) -> Discovery:
    """The Python files under `paths` (see api.discover_files). With `judge` off, the files
    alone: their kinds and anchors are left empty (the project index needs only the files)."""
    import stat

    cwd = Path.cwd()
    found = Discovery(resolver=resolver or Resolver())
    resolver = found.resolver
    excludes = _Spec([*config.exclude, *config.extend_exclude])
    seen: set[str] = set()
    kinds = PathKinds(config.root, resolver) if judge else None
    under_cwd = _Prefixes(cwd)  # a folder's path relative to cwd, for the paths as shown
    under_root = _Prefixes(config.root)  # and relative to the root, for the excludes

    def excluded(path: Path, is_dir: bool, head: str | None = None) -> bool:
        prefix = under_root.get(path.parent) if head is None else under_root.of_text(head)
        if prefix is None and path == config.root:  # the root itself, named from above it
            return excludes.match("./" if is_dir else ".")
        return excluded_name(prefix, path.name, is_dir)

    def excluded_name(prefix: str | None, name: str, is_dir: bool = False) -> bool:
        """Whether `name`, in the folder whose root-relative prefix is `prefix` (None outside
        the root: the name alone is matched), is excluded."""
        return excludes.match((prefix or "") + name + ("/" if is_dir else ""))

    root_text = os.path.realpath(config.root)

    def add(text: str, head: str, name: str, explicit: bool = False) -> None:
        """The file `text` (as `str(path)` gives it), named `name` in the folder `head`, unless
        a file seen already, or a link (itself or a folder above it) that is not read."""
        try:
            real = resolver.realpath(text)
        except OSError:
            real = text
        key = os.path.normcase(real)  # a symlink and its target are one file
        prefix = under_cwd.of_text(head)
        # as shown and as anchored: printable (a name may hold a newline or an escape)
        shown = printable(text.replace(os.sep, "/") if prefix is None else prefix + name)
        if not resolver.is_plain(text) or real != os.path.abspath(text):
            found.plain = False
            problem = link_problem(text, root_text)
            if problem is not None:
                found.skipped.append(f"{shown}: skipped: {problem}")
                return
        if key not in seen:
            seen.add(key)
            found.entries.append((text, shown))
            if kinds is not None:
                kind, relative = kinds.judge(text)
                found.kinds[shown] = SOURCE if explicit else kind
                found.anchors[shown] = printable(relative) if relative else shown

    cwd_text = str(cwd)
    for given in paths:
        text = _joined(cwd_text, given)
        if text is not None:  # a plain regular file (the usual named file): one lstat, no resolution
            try:
                regular = stat.S_ISREG(os.lstat(text).st_mode)
            except OSError:
                regular = False
            if regular:
                resolver.note_regular(text)
                head, name = os.path.split(text)
                if not (force_exclude and excluded_name(under_root.of_text(head), name)):
                    add(text, head, name, explicit=not force_exclude)
                continue
        path = Path(given)
        absolute = path if path.is_absolute() else cwd / path
        try:
            mode = absolute.stat().st_mode
        except OSError as error:
            # as a walked file's: the path as given, made printable (pre-commit passes the
            # repository's own file names), and why it cannot be read
            found.errors.append(f"{printable(given.replace(os.sep, '/'))}: cannot read: {_problem(error, absolute)}")
            continue
        if stat.S_ISREG(mode):
            if not (force_exclude and excluded(absolute, False)):
                # named files are checked whatever their name, unless excludes apply to them too
                # (`--force-exclude`, as the pre-commit hooks pass): then test files are skipped too
                add(str(absolute), str(absolute.parent), absolute.name, explicit=not force_exclude)
            continue
        found.walked.append(given)
        ignores = _GitIgnores(absolute if respect_gitignore else None)
        found.watched.extend(str(d / ".gitignore") for d in ignores.chain)
        for directory, dirnames, filenames in os.walk(
            absolute, onerror=lambda e: found.errors.append(f"{e.filename}: {e.strerror}")
        ):
            here = Path(directory)
            head = str(here)
            found.watched.append(directory)
            ignores.enter(here)
            ignored = ignores.matcher(here)
            dirnames[:] = sorted(d for d in dirnames if not excluded(here / d, True) and not ignored(d, True))
            if found.plain and any(os.path.islink(os.path.join(directory, d)) for d in dirnames):
                found.plain = False  # not walked (as os.walk does), but its target could change kind
            for filename in sorted(filenames):
                if filename.endswith(PYTHON_SUFFIXES):
                    file = here / filename
                    if not excluded(file, False, head) and not ignored(filename, False):
                        add(str(file), head, filename)
        found.watched.extend(str(d / ".gitignore") for d in ignores.specs)
        found.plain = found.plain and not found.errors
    found.entries.sort(key=lambda item: item[1])
    return found


class _Prefixes:
    """Folders' paths relative to one base, as POSIX text ending in `/` ("" for the base
    itself; None outside it), each computed once: a file's is its folder's plus its name,
    as `(folder / name).relative_to(base).as_posix()` would give."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self._known: dict[Path, str | None] = {}
        self._by_text: dict[str, str | None] = {}

    def of_text(self, folder: str) -> str | None:
        """What `get(Path(folder))` gives, found by the folder's text."""
        try:
            return self._by_text[folder]
        except KeyError:
            prefix = self._by_text[folder] = self.get(Path(folder))
            return prefix

    def get(self, folder: Path) -> str | None:
        try:
            return self._known[folder]
        except KeyError:
            pass
        try:
            relative = folder.relative_to(self.base).as_posix()
        except ValueError:
            prefix = None
        else:
            prefix = "" if relative == "." else relative + "/"
        self._known[folder] = prefix
        return prefix


class _Spec:
    """A GitIgnoreSpec, matched as pathspec matches it, with a quick first test: a path that
    none of the patterns' regular expressions finds cannot match the spec (pathspec's result
    is then "no pattern matched", which is not a match), so only paths that some pattern
    finds are decided by pathspec itself (negations, directory patterns, order).

    Patterns that are all plain names (the default excludes: `.git`, `build`...) are matched
    without pathspec, which is then not imported: such a name matches a path with that name
    as one of its parts, which is the expression pathspec makes of it."""

    def __init__(self, lines: list[str]) -> None:
        lines = [line for line in lines if not too_many_wildcards(line)]  # a .gitignore may hold one
        self._lines = lines
        self._names: re.Pattern[str] | None = None
        if lines and all(_PLAIN_NAME.fullmatch(line) for line in lines):
            names = "|".join(re.escape(line) for line in lines)
            self._names = re.compile(rf"^(?:.+/)?(?:{names})(?:/|$)")
            return
        from pathspec.pattern import RegexPattern
        from pathspec.util import normalize_file

        self._normalize = normalize_file
        regexes = [
            regex
            for pattern in self.spec.patterns
            if pattern.include is not None and (regex := getattr(pattern, "regex", None)) is not None
        ]
        self._regexes = _one_regex(regexes)
        # the quick test holds for patterns matched by `regex.search` alone; for any other kind
        # of pattern, ask pathspec every time
        self._exact = all(
            isinstance(pattern, RegexPattern) and type(pattern).match_file is RegexPattern.match_file
            for pattern in self.spec.patterns
        )

    @cached_property
    def spec(self) -> pathspec.GitIgnoreSpec:
        """pathspec's own spec of the lines (built on first use when the names are plain)."""
        import pathspec

        return pathspec.GitIgnoreSpec.from_lines(self._lines)

    def match(self, text: str) -> bool:
        if self._names is not None:
            if os.sep != "/" or os.altsep:
                text = text.replace(os.sep, "/").replace(os.altsep or os.sep, "/")
            text = text[1:] if text.startswith("/") else text[2:] if text.startswith("./") else text
            return self._names.match(text) is not None
        if self._exact:
            normal = self._normalize(text)
            if not any(regex.search(normal) for regex in self._regexes):
                return False
        return bool(self.spec.match_file(text))


def _joined(cwd: str, given: str) -> str | None:
    """`str(Path(cwd) / given)` (`given` itself when absolute), from the text alone when that is
    sure: POSIX, and no empty or `.` parts to fold; None otherwise."""
    while given.startswith("./"):
        given = given[2:]
    if os.sep != "/" or not given or "//" in given or "/./" in given or given.endswith(("/", "/.")) or given == ".":
        return None
    if given.startswith("/"):
        return given
    return None if cwd == "/" or "//" in cwd else cwd + "/" + given


def repository_chain(start: Path) -> list[Path]:
    """The folders from the git repository's root down to `start` (none outside a repository):
    their .gitignore files apply below `start`."""
    root = next((p for p in (start, *start.parents) if (p / ".git").exists()), None)
    if root is None:
        return []
    chain = [start, *start.parents]
    return list(reversed(chain[: chain.index(root) + 1]))


def _problem(error: OSError, path: Path) -> str:
    """Why a path given on the command line cannot be checked, in a few words (a broken link
    in the words a walked one is skipped with)."""
    import errno

    if error.errno == errno.ELOOP:
        return "symlink loop"
    if error.errno == errno.ENOENT:
        return "a broken symbolic link" if path.is_symlink() else "no such file or directory"
    return (error.strerror or str(error)).lower()


def _one_regex(regexes: list[re.Pattern[str]]) -> list[re.Pattern[str]]:
    """The patterns' regular expressions as one (found by it when found by any), or as they
    are when they cannot be joined (back-references, different flags, bytes)."""
    if len(regexes) < 2 or len({regex.flags for regex in regexes}) != 1:
        return regexes
    sources = []
    for index, regex in enumerate(regexes):
        source = regex.pattern
        if not isinstance(source, str) or "(?P=" in source or _BACKREFERENCE.search(source):
            return regexes
        # group names must be unique in one expression: number them by pattern
        named = _GROUP_NAME.sub(rf"(?P<\1_{index}>", source)
        sources.append(f"(?:{named})")
    try:
        return [re.compile("|".join(sources), regexes[0].flags)]
    except re.error:
        return regexes


class _GitIgnores:
    """The .gitignore files that apply below a directory, from its repository root down."""

    def __init__(self, start: Path | None) -> None:
        self.specs: dict[Path, _Spec] = {}
        self.enabled = start is not None
        self.chain = repository_chain(start) if start is not None else []
        for directory in self.chain:
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
            self.specs[directory] = _Spec(lines)

    def ignored(self, path: Path, is_dir: bool) -> bool:
        return self.matcher(path.parent)(path.name, is_dir)

    def matcher(self, directory: Path) -> Callable[[str, bool], bool]:
        """Whether a name in `directory` is ignored (a folder when the flag is set): each spec
        with the folder's path relative to its own folder, computed once."""
        prefixes: list[tuple[_Spec, str]] = []
        for base, spec in self.specs.items():
            try:
                relative = directory.relative_to(base).as_posix()
            except ValueError:
                continue
            prefixes.append((spec, "" if relative == "." else relative + "/"))

        def ignored(name: str, is_dir: bool) -> bool:
            suffix = "/" if is_dir else ""
            return any(spec.match(prefix + name + suffix) for spec, prefix in prefixes)

        return ignored
