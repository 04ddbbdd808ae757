"""flake8 adapter: a thin shim over the engine, as flake8's own pyflakes adapter is.

flake8 runs a plugin once per file only when its constructor asks for `tree`; the ast is
ignored and `lines` (which may be an editor's unsaved buffer, filename "stdin") is parsed
with libcst. flake8 owns selection and `# noqa` here, so IDM800 is never emitted. Nothing
may escape `run()`: an exception would abort the whole flake8 run.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

from idemlint import __version__


class Plugin:
    name = "idemlint"
    version = __version__
    _config: Any = None

    def __init__(self, tree: object, lines: list[str], filename: str) -> None:
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, parser: Any) -> None:
        for option, help_text in (
            ("--idemlint-key-names", "Extra keyword/dict names that carry an idempotency key."),
            ("--idemlint-key-headers", "Extra HTTP header names that carry an idempotency key."),
            ("--idemlint-state-columns", "Extra state-like column names for IDM103."),
            ("--idemlint-side-effect-calls", "Extra calls (dotted names) that have external side effects."),
            ("--idemlint-idempotent-calls", "Calls (dotted names) that are idempotent by nature."),
        ):
            parser.add_option(option, default="", parse_from_config=True, comma_separated_list=True, help=help_text)
        for flag, help_text in (
            ("--idemlint-check-tests", "Also check test files (skipped by default)."),
            ("--idemlint-check-migrations", "Also run the data-model rules on migrations (skipped by default)."),
        ):
            parser.add_option(flag, action="store_true", default=False, parse_from_config=True, help=help_text)

    @classmethod
    def parse_options(cls, options: Any) -> None:
        from idemlint.config import Config

        cls._config = Config(
            key_names=tuple(getattr(options, "idemlint_key_names", ()) or ()),
            key_headers=tuple(getattr(options, "idemlint_key_headers", ()) or ()),
            state_columns=tuple(getattr(options, "idemlint_state_columns", ()) or ()),
            side_effect_calls=tuple(getattr(options, "idemlint_side_effect_calls", ()) or ()),
            idempotent_calls=tuple(getattr(options, "idemlint_idempotent_calls", ()) or ()),
            check_tests=bool(getattr(options, "idemlint_check_tests", False)),
            check_migrations=bool(getattr(options, "idemlint_check_migrations", False)),
        )

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            from idemlint.config import Config
            from idemlint.engine import check_source
            from idemlint.rules import ALL_RULES

            result = check_source("".join(self.lines), self.filename, self._config or Config(), ALL_RULES)
            for message in result.errors:
                print(f"idemlint: {message}", file=sys.stderr)
            for finding in result.findings:
                yield finding.line, finding.col - 1, f"{finding.code} {finding.message}", type(self)
        except Exception as error:  # never let one file abort the whole flake8 run
            yield 1, 0, f"IDM900 idemlint could not check this file: {type(error).__name__}: {error}", type(self)
