"""What applies to one file by its path: the rules that run on it, and whether excludes drop it.

Both are judged from the path relative to the project root (the "anchor"), so that a file
is treated the same whatever folder idemlint runs from, and the same by the CLI, the
language server and `--fix`.
"""

from __future__ import annotations

from collections.abc import Sequence
from fnmatch import fnmatch

from idemlint.config import Config
from idemlint.paths import MIGRATION, TEST, kind_of_relative
from idemlint.rule import Rule


def rules_for_path(rules: Sequence[type[Rule]], path: str, config: Config, kind: str | None = None) -> list[type[Rule]]:
    """The rules that run on `path`. `kind` (test, migration or source) is judged by
    discovery from the path relative to the project root; without it, from `path` itself."""
    kind = kind_of_relative(path) if kind is None else kind
    if not config.check_tests and kind == TEST:
        return []
    if not config.check_migrations and kind == MIGRATION:
        rules = [rule for rule in rules if not rule.skips_migrations]
    ignores = [codes for pattern, codes in config.per_file_ignores if _path_matches(path, pattern)]
    if not ignores:
        return list(rules)
    flat = [code for codes in ignores for code in codes]
    return [rule for rule in rules if not any(rule.code.startswith(c.upper()) for c in flat)]


def _path_matches(path: str, pattern: str) -> bool:
    return fnmatch(path, pattern) or fnmatch(path, f"*/{pattern}") or fnmatch(path, f"{pattern.rstrip('/')}/*")


def is_excluded(anchor: str, config: Config) -> bool:
    """Whether `exclude`/`extend-exclude` leave out one file, as discovery does in a folder
    walk: for a document an editor opens directly."""
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines([*config.exclude, *config.extend_exclude])
    return spec.match_file(anchor)
