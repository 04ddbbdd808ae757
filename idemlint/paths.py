"""Path policy: the project root, and which files are test code or migrations.

Both are judged from the path *relative to the project root*, never from the path as typed,
so `idemlint check work/tests/proj` checks the project the same way as `cd work/tests/proj
&& idemlint check` does.
"""

from __future__ import annotations

import os
import re
import stat
import sys
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path

_TEST_FILE = re.compile(r"(^|/)(tests?|testing)/|(^|/)(tests|test_[^/]*|[^/]*_tests?|conftest)\.py$")
# Django's `migrations/`, alembic's `alembic/versions/` and `revisions/<branch>/versions/`
_MIGRATION_FILE = re.compile(r"(^|/)(migrations|alembic/versions|revisions(/\w+)*/versions)/|(^|/)migrations\.py$")
# A folder with a conftest.py is a pytest root; it holds test code when its name says so
# (celery keeps tests under t/integration). Not any conftest folder: Django apps keep a
# conftest.py beside production modules (mitxpro's ecommerce/, saleor's payment/gateways/).
_TEST_FOLDER_NAMES = frozenset(
    {"t", "test", "tests", "testing", "integration", "e2e", "smoke", "functional", "unit", "acceptance", "benchmarks"}
)

TEST, MIGRATION, SOURCE = "test", "migration", ""


def is_test_file(path: str) -> bool:
    return bool(_TEST_FILE.search(path.replace("\\", "/")))


def is_migration_file(path: str) -> bool:
    return bool(_MIGRATION_FILE.search(path.replace("\\", "/")))


# Where code runs, from its root-relative path: a finding in a one-off script, an example, a
# management command or developer tooling is of less harm than one on a request path or in a
# task (run by hand, one at a time, or never in production).
# (`tools/`, `bin/`, `dev/`, `ci/` only at the top: `anthropic/lib/tools/` is a package of the product;
# an evaluation or benchmark harness, `evals/`, `benchmarks/`, wherever it sits, is run by its developers)
_SCRIPT_FILE = re.compile(
    r"(^|/)(scripts?|\.github|docs?|evals?|benchmarks?)/|^(bin|tools|dev|devtools|ci)/"
    r"|(^|/)(setup|manage|noxfile|fabfile|conftest|__main__)\.py$"
)
_EXAMPLE_FILE = re.compile(r"(^|/)(examples?|samples?|demos?|tutorials?)/")
_COMMAND_FILE = re.compile(r"(^|/)management/commands/")
ROLES = ("source", "script", "example", "management command", "test", "migration")
# the roles of code a person runs by hand, one run at a time (a race needs two at once), or
# that shows how to use a library rather than running in production
RUN_BY_HAND = frozenset({"script", "management command", "example"})


def role_of(path: str) -> str:
    """What a file is, for a finding's evidence: one of ROLES."""
    text = path.replace("\\", "/")
    if _TEST_FILE.search(text):
        return "test"
    if _MIGRATION_FILE.search(text):
        return "migration"
    if _COMMAND_FILE.search(text):
        return "management command"
    if _EXAMPLE_FILE.search(text):
        return "example"
    if _SCRIPT_FILE.search(text):
        return "script"
    return "source"


def kind_of_relative(path: str) -> str:
    """Test, migration or source, from a path relative to the project root alone."""
    if is_test_file(path):
        return TEST
    if is_migration_file(path):
        return MIGRATION
    return SOURCE


def resolved(path: Path) -> Path:
    """`path.resolve()`, or the absolute path when it cannot be resolved (a symlink loop)."""
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


def project_root(paths: Iterable[str], pyproject: Path | None, resolver: Resolver | None = None) -> Path:
    """The directory of the configuration in use, else the git root above the first path,
    else the common root of the given paths."""
    if pyproject is not None:
        return resolved(pyproject).parent
    resolver = resolver or Resolver()
    given = list(paths)
    start = Path(given[0]).absolute() if given else Path.cwd()
    # a named file's own folder, not its link's target's (see config.find_pyproject)
    first = resolver.resolved(start) if start.is_dir() else resolver.resolved(start.parent)
    for candidate in (first, *first.parents):
        if (candidate / ".git").exists():
            return candidate
    directories = {resolver.folder_text(p): None for p in given} or {str(first): None}
    return Path(os.path.commonpath(list(directories)))


class Resolver:
    """`resolved()` and `os.path.realpath()` for the many files of one run, at the cost of one
    `lstat` each: a file's folder is resolved once, and a file that is not itself a symlink
    resolves to its resolved folder joined with its name (what a full resolution would give).
    Anything unusual (a symlink, a name like `..`, a file that cannot be examined) takes the
    full resolution. Keep one per run: a folder renamed meanwhile is not noticed."""

    def __init__(self) -> None:
        self._real: dict[str, str] = {}  # folder -> its resolution
        self._plain_files: dict[str, tuple[str, str] | None] = {}

    def _plain(self, text: str) -> tuple[str, str] | None:
        """(folder, name) when `text` names an existing file that is not a symlink."""
        try:
            return self._plain_files[text]
        except KeyError:
            pass
        head, name = os.path.split(text)
        plain: tuple[str, str] | None = (head, name)
        if name in ("", ".", ".."):
            plain = None
        else:
            try:
                if stat.S_ISLNK(os.lstat(text).st_mode):
                    plain = None
            except (OSError, ValueError):
                plain = None
        self._plain_files[text] = plain
        return plain

    def _folder(self, head: str) -> str:
        """`os.path.realpath(head)` for a folder, at the cost of one `lstat` when its parent's
        resolution is known: a folder that is not a symlink resolves to its resolved parent
        joined with its name. (`Path.resolve()` gives the same for a folder that exists.)"""
        try:
            return self._real[head]
        except KeyError:
            pass
        parent, name = os.path.split(head)
        real = None
        if os.path.isabs(head) and parent != head and name not in ("", ".", ".."):
            try:
                if not stat.S_ISLNK(os.lstat(head).st_mode):
                    real = os.path.join(self._folder(parent), name)
            except (OSError, ValueError):
                pass
        if real is None:
            real = os.path.realpath(head)
        self._real[head] = real
        return real

    def folder_text(self, given: str) -> str:
        """The resolved folder `given` names, or holds when it is a file: for a regular file
        that is not a symlink, its resolved folder (one `lstat`), else from its resolution."""
        try:
            regular = stat.S_ISREG(os.lstat(given).st_mode)
        except (OSError, ValueError):
            regular = False
        head, name = os.path.split(given)
        if regular and name not in ("", ".", ".."):
            self._plain_files.setdefault(given, (head, name))
            return self._folder(head)
        text = self.resolved_text(Path(given))
        return text if os.path.isdir(text) else os.path.dirname(text)

    def note_regular(self, text: str) -> None:
        """`text` names a regular file (an `lstat` said so): no need to examine it again."""
        head, name = os.path.split(text)
        self._plain_files[text] = (head, name) if name not in ("", ".", "..") else None

    def is_plain(self, path: Path | str) -> bool:
        """Whether `path` names an existing file that is not a symlink (one `lstat`, once)."""
        return self._plain(os.fspath(path)) is not None

    def resolved(self, path: Path) -> Path:
        """What `resolved(path)` gives."""
        return Path(self.resolved_text(path))

    def resolved_text(self, path: Path | str) -> str:
        """What `str(resolved(path))` gives."""
        parts = self._plain(os.fspath(path))
        if parts is None:
            return str(resolved(Path(path)))
        head, name = parts
        return os.path.join(self._folder(head), name)

    def realpath(self, path: Path | str) -> str:
        """What `os.path.realpath(path)` gives."""
        text = os.fspath(path)
        parts = self._plain(text)
        if parts is None:
            return os.path.realpath(text)
        head, name = parts
        return os.path.join(self._folder(head), name)


class PathKinds:
    """Classifies files of one project: the path-name conventions above, pytest's
    `testpaths`, and conftest.py folders named like test folders."""

    def __init__(self, root: Path, resolver: Resolver | None = None) -> None:
        self.root = root
        # pytest's `testpaths` that hold only tests: a folder that is a Python package
        # (`credentials/apps` with its `__init__.py`) holds the code under test beside them,
        # and there only test-named files and test folders are tests
        self.testpaths = tuple(
            t for t in _pytest_testpaths(root) if _named_like_tests(t) or not (root / t / "__init__.py").is_file()
        )
        self.resolver = resolver or Resolver()
        self._real_root = resolved(root)
        text = str(self._real_root)
        self._root_text, self._root_prefix = text, text if text.endswith(os.sep) else text + os.sep

    def relative(self, path: Path | str) -> str | None:
        if os.sep == "/":  # as `relative_to` would give it, from the text
            text = self.resolver.resolved_text(path)
            if text == self._root_text:
                return "."
            return text[len(self._root_prefix) :] if text.startswith(self._root_prefix) else None
        try:
            return self.resolver.resolved(Path(path)).relative_to(self._real_root).as_posix()
        except ValueError:
            return None

    def kind(self, path: Path | str) -> str:
        return self.judge(path)[0]

    def is_production(self, path: Path | str) -> bool:
        """Source code, not a test or a migration: only it is called from production code, so
        only it is summarised for the project index."""
        return self.kind(path) == SOURCE

    def judge(self, path: Path | str) -> tuple[str, str | None]:
        """The file's kind and its path relative to the root (None outside it), in one go."""
        relative = self.relative(path)
        return self._kind(path, relative), relative

    def _kind(self, path: Path | str, relative: str | None) -> str:
        if relative is None:
            return kind_of_relative(os.path.basename(os.fspath(path)))
        kind = kind_of_relative(relative)
        if kind:
            return kind
        if any(relative == t or relative.startswith(t + "/") for t in self.testpaths):
            return TEST
        parts = relative.split("/")[:-1]
        for depth in range(len(parts)):
            if _named_like_tests(parts[depth]) and _has_conftest(self.root.joinpath(*parts[: depth + 1])):
                return TEST
        return SOURCE


def _named_like_tests(path: str) -> bool:
    """`tests`, `api_tests`, `test_suite`: a folder named for tests holds only tests."""
    name = path.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1].lower()
    return name in _TEST_FOLDER_NAMES or name.endswith(("_tests", "_test")) or name.startswith(("test_", "tests_"))


@lru_cache(maxsize=256)
def _has_conftest(directory: Path) -> bool:
    return (directory / "conftest.py").is_file() or any(
        (child / "conftest.py").is_file() for child in _subdirectories(directory)
    )


def _subdirectories(directory: Path) -> list[Path]:
    try:
        return [d for d in directory.iterdir() if d.is_dir()]
    except OSError:
        return []


# where pytest reads `testpaths` besides pyproject.toml: which files are tests follows them
PYTEST_INI_FILES = (("pytest.ini", "pytest"), ("tox.ini", "pytest"), ("setup.cfg", "tool:pytest"))


def _pytest_testpaths(root: Path) -> list[str]:
    """pytest's `testpaths` from pyproject.toml, pytest.ini, tox.ini or setup.cfg."""
    found: list[str] = []
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover - exercised on 3.10 only
            import tomli as tomllib
        try:
            options = tomllib.loads(pyproject.read_text(encoding="utf-8"))
            value = options.get("tool", {}).get("pytest", {}).get("ini_options", {}).get("testpaths", [])
            found.extend([value] if isinstance(value, str) else [v for v in value if isinstance(v, str)])
        except (OSError, UnicodeDecodeError, ValueError):
            pass
    for name, section in PYTEST_INI_FILES:
        ini = root / name
        if not ini.is_file():
            continue
        import configparser

        parser = configparser.ConfigParser()
        try:
            parser.read_string(ini.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, configparser.Error):
            continue
        if parser.has_option(section, "testpaths"):
            found.extend(parser.get(section, "testpaths").split())
    return [p.strip("/").removeprefix("./") for p in found if p.strip("/.")]
