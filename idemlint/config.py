"""`[tool.idemlint]` from the nearest pyproject.toml, validated with clear errors."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from idemlint.calibration import CONFIDENCE_LEVELS

if TYPE_CHECKING:
    from idemlint.knowledge.vocabulary import Vocabulary

DEFAULT_EXCLUDES = (
    ".git",
    ".hg",
    ".svn",
    ".venv",
    "venv",
    ".env",
    "env",
    "__pycache__",
    "build",
    "dist",
    "node_modules",
    ".tox",
    ".nox",
    ".mypy_cache",
    ".pytest_cache",
    ".ruff_cache",
    ".idemlint_cache",
    ".eggs",
    "site-packages",
)


class ConfigError(Exception):
    """A configuration problem the user must fix; the CLI prints it and exits 2."""


# Glob patterns become regular expressions that backtrack: each run of `*` multiplies the
# time a path can take (six runs cost 50 ms a path, eight a second). Real patterns use at
# most three (`**/build/**/*.py`); longer ones are refused here and skipped in .gitignore.
MAX_WILDCARD_RUNS = 4
_WILDCARD_RUN = re.compile(r"\*+")


def too_many_wildcards(pattern: str) -> bool:
    return len(_WILDCARD_RUN.findall(pattern)) > MAX_WILDCARD_RUNS


def wildcard_problem(patterns: Iterable[str], where: str) -> str | None:
    """Why one of `patterns` is refused, or None (see MAX_WILDCARD_RUNS)."""
    for pattern in patterns:
        if too_many_wildcards(pattern):
            return f"{where}: {pattern!r} has more than {MAX_WILDCARD_RUNS} runs of `*`; simplify the pattern"
    return None


@dataclass(frozen=True)
class Config:
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()  # added to `select` (or to all rules when it is empty)
    extend_ignore: tuple[str, ...] = ()  # added to `ignore`
    exclude: tuple[str, ...] = DEFAULT_EXCLUDES
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    key_names: tuple[str, ...] = ()
    key_headers: tuple[str, ...] = ()
    state_columns: tuple[str, ...] = ()
    side_effect_calls: tuple[str, ...] = ()
    idempotent_calls: tuple[str, ...] = ()
    all_updates_need_count: bool = False
    # Test code and migrations are checked only on request: a race in a fixture or a
    # one-shot backfill has no duplicate delivery to fear, and reports there are noise.
    check_tests: bool = False
    check_migrations: bool = False
    # folders (relative to the project root) that hold top-level packages, as ruff's `src`:
    # `src/shop/api.py` is the module `shop.api`
    src: tuple[str, ...] = ("src",)
    # What is shown (not what is found): "" is the default floor (idemlint.calibration)
    min_confidence: str = ""
    min_stakes: str = "none"
    root: Path = field(default_factory=Path.cwd, compare=False)
    source: str = field(default="", compare=False)  # the file this configuration came from

    @property
    def vocabulary(self) -> Vocabulary:
        """The knowledge catalogue with this configuration's additions: what every analysis asks."""
        from idemlint.knowledge.vocabulary import vocabulary

        return vocabulary(
            self.state_columns, (*self.key_names, *self.key_headers), self.side_effect_calls, self.idempotent_calls
        )

    def with_overrides(self, **changes: Any) -> Config:
        return replace(self, **{k: v for k, v in changes.items() if v is not None})

    @property
    def selected(self) -> tuple[str, ...]:
        """The selection in force: `select` (all rules when empty) plus `extend-select`."""
        if not self.extend_select:
            return self.select
        return (*(self.select or ("ALL",)), *self.extend_select)

    @property
    def ignored(self) -> tuple[str, ...]:
        return (*self.ignore, *self.extend_ignore)

    def fingerprint(self) -> str:
        """What the cache keys on: every option that can change a file's findings."""
        shown_only = ("root", "source", "exclude", "extend_exclude", "min_confidence", "min_stakes")
        data = {k: v for k, v in self.__dict__.items() if k not in shown_only}
        return repr(sorted(data.items()))


@dataclass(frozen=True)
class Option:
    """One configuration key: its name in `[tool.idemlint]`, the Config field, its kind, its
    help, and whether the flake8 plugin offers it (flake8 owns selection and file discovery)."""

    key: str
    field: str
    kind: str  # "list" | "bool" | "choice"
    help: str
    in_flake8: bool = True
    choices: tuple[str, ...] = ()  # a "choice" option's values


# The single source of configuration keys: the TOML parser, the flake8 plugin's options and
# their tests all read it.
OPTIONS: tuple[Option, ...] = (
    Option("select", "select", "list", "Codes or prefixes to enable (default: all).", in_flake8=False),
    Option("ignore", "ignore", "list", "Codes or prefixes to disable.", in_flake8=False),
    Option("extend-select", "extend_select", "list", "Codes or prefixes enabled on top of select.", in_flake8=False),
    Option("extend-ignore", "extend_ignore", "list", "Codes or prefixes disabled on top of ignore.", in_flake8=False),
    Option("exclude", "exclude", "list", "Patterns that replace the default excludes.", in_flake8=False),
    Option("extend-exclude", "extend_exclude", "list", "Patterns excluded on top of the defaults.", in_flake8=False),
    Option("key-names", "key_names", "list", "Extra keyword/dict names that carry an idempotency key."),
    Option("key-headers", "key_headers", "list", "Extra HTTP header names that carry an idempotency key."),
    Option("state-columns", "state_columns", "list", "Extra state-like column names for IDM103."),
    Option("side-effect-calls", "side_effect_calls", "list", "Extra calls (dotted names) with external side effects."),
    Option("idempotent-calls", "idempotent_calls", "list", "Calls (dotted names) that are idempotent by nature."),
    Option(
        "all-updates-need-count",
        "all_updates_need_count",
        "bool",
        "IDM102 for every UPDATE, not only conditional ones.",
    ),
    Option("check-tests", "check_tests", "bool", "Also check test files (skipped by default)."),
    Option("check-migrations", "check_migrations", "bool", "Also run the data-model rules on migrations."),
    Option(
        "min-confidence",
        "min_confidence",
        "choice",
        "Show only findings at least this sure (default: high, and medium kinds measured at least 85% true).",
        choices=CONFIDENCE_LEVELS,
    ),
    Option(
        "min-stakes",
        "min_stakes",
        "choice",
        "Show only findings with at least this much at stake: none, state or external (money or another system).",
        choices=("none", "state", "external"),
    ),
    Option(
        "src",
        "src",
        "list",
        "Folders holding top-level packages, for module names (default: src), as ruff's `src`.",
        in_flake8=False,
    ),
)
_LIST_KEYS = {o.key: o.field for o in OPTIONS if o.kind == "list"}
_BOOL_KEYS = {o.key: o.field for o in OPTIONS if o.kind == "bool"}
_CHOICE_KEYS = {o.key: o for o in OPTIONS if o.kind == "choice"}


STANDALONE = (".idemlint.toml", "idemlint.toml")  # the whole file is the configuration
FLAKE8_FILES = ("setup.cfg", "tox.ini", ".flake8")  # `idemlint-*` options in a [flake8] section
# every file a configuration may come from, in no order (the language server watches them)
CONFIG_FILES = (*STANDALONE, "pyproject.toml", *FLAKE8_FILES)


def find_pyproject(start: Path) -> Path | None:
    """The nearest configuration at or above `start`. In each folder, in ruff's order:
    `.idemlint.toml`, `idemlint.toml`, a `pyproject.toml` with a [tool.idemlint] table; then,
    for flake8 users who configure once, a [flake8] section with `idemlint-*` options in
    `setup.cfg`, `tox.ini` or `.flake8`. The search stops at the repository's root (the
    first folder with `.git`): a file above the repository never applies to it."""
    from idemlint.paths import resolved

    # a named file's own folder, not its link's target's: a committed link cannot move the
    # project (and its configuration) somewhere else
    directory = resolved(start) if start.is_dir() else resolved(start.absolute().parent)
    for candidate in (directory, *directory.parents):
        for name in STANDALONE:
            if (candidate / name).is_file():
                return candidate / name
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file() and "[tool.idemlint" in _text(pyproject):
            return pyproject
        for name in FLAKE8_FILES:
            path = candidate / name
            if path.is_file() and re.search(r"^\s*idemlint[-_]", _text(path), re.MULTILINE):
                return path
        if (candidate / ".git").exists():
            break  # the repository's root: a file above it is not the project's
    return None


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def load_config(pyproject: Path | None) -> Config:
    if pyproject is None:
        return Config()
    if pyproject.name in FLAKE8_FILES:
        return _load_flake8_section(pyproject)
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read: {error}") from error
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{pyproject}: not valid TOML: {error}") from error
    # read by content, whatever the file is called (`--config ci.toml`): a [tool.idemlint] table,
    # else the whole file as idemlint.toml holds it, so an unknown key there is refused, never
    # silently ignored; only a pyproject.toml may hold no idemlint table at all
    tool = data.get("tool")
    if isinstance(tool, dict) and "idemlint" in tool and pyproject.name not in STANDALONE:
        table = tool["idemlint"]
    elif pyproject.name == "pyproject.toml":
        table = {}
    else:
        table = data
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.idemlint] must be a table")
    return parse_table(table, pyproject.parent, str(pyproject))


def _load_flake8_section(path: Path) -> Config:
    """`idemlint-key-headers = X-Txn-Token` in [flake8]: the options the flake8 plugin reads,
    comma- or line-separated lists, true/false for flags."""
    import configparser

    parser = configparser.ConfigParser()
    try:
        parser.read_string(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, configparser.Error) as error:
        raise ConfigError(f"{path}: cannot read: {error}") from error
    table: dict[str, Any] = {}
    if parser.has_section("flake8"):
        for key, value in parser.items("flake8"):
            name = key.replace("_", "-")
            if not name.startswith("idemlint-"):
                continue
            option = name.removeprefix("idemlint-")
            if option in _BOOL_KEYS:
                table[option] = value.strip().lower() in ("1", "true", "yes", "on")
            elif option == "per-file-ignores":
                ignores: dict[str, list[str]] = {}
                for item in re.split(r"[\n]+", value):
                    pattern, _, codes = item.strip().partition(":")
                    if pattern and codes:
                        ignores[pattern.strip()] = [c.strip() for c in codes.split(",") if c.strip()]
                table[option] = ignores
            else:
                table[option] = [v.strip() for v in re.split(r"[,\n]", value) if v.strip()]
    return parse_table(table, path.parent, f"{path} [flake8]")


def parse_table(table: dict[str, Any], root: Path, origin: str) -> Config:
    values: dict[str, Any] = {"root": root}
    for key, value in table.items():
        where = f"{origin}: [tool.idemlint] {key}"
        if key in _LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where} must be a list of strings, got {value!r}")
            if key == "select" and not value:  # as `--select ""` is refused: it would check nothing
                raise ConfigError(f"{where} = []: name at least one code or prefix (or leave select out to select all)")
            values[_LIST_KEYS[key]] = tuple(value)
        elif key == "per-file-ignores":
            if not isinstance(value, dict) or not all(
                isinstance(codes, list) and all(isinstance(c, str) for c in codes) for codes in value.values()
            ):
                raise ConfigError(f'{where} must map glob patterns to lists of codes, e.g. {{"tests/*" = ["IDM1"]}}')
            values["per_file_ignores"] = tuple((pattern, tuple(codes)) for pattern, codes in value.items())
        elif key in _BOOL_KEYS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where} must be true or false, got {value!r}")
            values[_BOOL_KEYS[key]] = value
        elif key in _CHOICE_KEYS:
            choice = _CHOICE_KEYS[key]
            if value not in choice.choices:
                raise ConfigError(f"{where} must be one of {', '.join(map(repr, choice.choices))}, got {value!r}")
            values[choice.field] = value
        else:
            import difflib

            options = sorted([*_LIST_KEYS, *_BOOL_KEYS, *_CHOICE_KEYS, "per-file-ignores"])
            close = difflib.get_close_matches(key.replace("_", "-"), options, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"{where}: unknown option; {hint}(known: {', '.join(options)})")
    config = Config(**values)
    from idemlint.registry import validate_codes

    for option, patterns in (
        ("exclude", config.exclude),
        ("extend-exclude", config.extend_exclude),
        ("per-file-ignores", [pattern for pattern, _codes in config.per_file_ignores]),
    ):
        problem = wildcard_problem(patterns, f"{origin}: [tool.idemlint] {option}")
        if problem is not None:
            raise ConfigError(problem)

    for option, codes in (
        ("select", config.select),
        ("ignore", config.ignore),
        ("extend-select", config.extend_select),
        ("extend-ignore", config.extend_ignore),
    ):
        bad = validate_codes(codes)
        if bad:
            raise ConfigError(f"{origin}: [tool.idemlint] {option}: unknown rule code or prefix {', '.join(bad)}")
    for _pattern, codes in config.per_file_ignores:
        bad = validate_codes(codes)
        if bad:
            raise ConfigError(
                f"{origin}: [tool.idemlint] per-file-ignores: unknown rule code or prefix {', '.join(bad)}"
            )
    return config
