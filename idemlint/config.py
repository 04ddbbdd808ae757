"""`[tool.idemlint]` from the nearest pyproject.toml, validated with clear errors."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

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
    root: Path = field(default_factory=Path.cwd, compare=False)
    source: str = field(default="", compare=False)  # the file this configuration came from

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
        data = {k: v for k, v in self.__dict__.items() if k not in ("root", "source", "exclude", "extend_exclude")}
        return repr(sorted(data.items()))


_LIST_KEYS = {
    "select": "select",
    "ignore": "ignore",
    "extend-select": "extend_select",
    "extend-ignore": "extend_ignore",
    "exclude": "exclude",
    "extend-exclude": "extend_exclude",
    "key-names": "key_names",
    "key-headers": "key_headers",
    "state-columns": "state_columns",
    "side-effect-calls": "side_effect_calls",
    "idempotent-calls": "idempotent_calls",
}


_BOOL_KEYS = {
    "all-updates-need-count": "all_updates_need_count",
    "check-tests": "check_tests",
    "check-migrations": "check_migrations",
}


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above `start` that has a [tool.idemlint] table."""
    from idemlint.paths import resolved

    start = resolved(start)
    directory = start if start.is_dir() else start.parent
    for candidate in (directory, *directory.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                text = pyproject.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "[tool.idemlint" in text:
                return pyproject
    return None


def load_config(pyproject: Path | None) -> Config:
    if pyproject is None:
        return Config()
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
    table = data.get("tool", {}).get("idemlint", {})
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.idemlint] must be a table")
    return parse_table(table, pyproject.parent, str(pyproject))


def parse_table(table: dict[str, Any], root: Path, origin: str) -> Config:
    values: dict[str, Any] = {"root": root}
    for key, value in table.items():
        where = f"{origin}: [tool.idemlint] {key}"
        if key in _LIST_KEYS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where} must be a list of strings, got {value!r}")
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
        else:
            import difflib

            options = sorted([*_LIST_KEYS, *_BOOL_KEYS, "per-file-ignores"])
            close = difflib.get_close_matches(key.replace("_", "-"), options, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise ConfigError(f"{where}: unknown option; {hint}(known: {', '.join(options)})")
    config = Config(**values)
    from idemlint.registry import validate_codes

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
