"""flake8 adapter: a thin shim over idemlint.api, as flake8's own pyflakes adapter is.

flake8 runs a plugin once per file only when its constructor asks for `tree`; the ast is
ignored and `lines` (which may be an editor's unsaved buffer, filename "stdin") is parsed
with libcst. flake8 owns selection and `# noqa` here, so IDM800 is never emitted. Nothing
may escape `run()`: an exception would abort the whole flake8 run. Calls into other modules
are followed through the project index an `idemlint check` stored, while it is fresh (read
once per flake8 process); without one, only the file's own functions are.
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
    _project: Any = None  # the stored project index, loaded by the first file a process checks

    def __init__(self, tree: object, lines: list[str], filename: str) -> None:
        self.lines = lines
        self.filename = filename

    @classmethod
    def add_options(cls, parser: Any) -> None:
        """Every configuration key that is not about selection or files, from the one table
        in idemlint.config: `idemlint-key-headers = X-Txn-Token` in [flake8]."""
        from idemlint.config import OPTIONS

        for option in OPTIONS:
            if not option.in_flake8:
                continue
            kind: dict[str, Any] = (
                {"action": "store_true", "default": False}
                if option.kind == "bool"
                else {"default": "", "choices": ("", *option.choices)}
                if option.kind == "choice"
                else {"default": "", "comma_separated_list": True}
            )
            help_text = option.help.replace("%", "%%")  # argparse formats help with %
            parser.add_option(f"--idemlint-{option.key}", parse_from_config=True, help=help_text, **kind)

    @classmethod
    def parse_options(cls, options: Any) -> None:
        from idemlint.config import OPTIONS, Config

        values: dict[str, Any] = {}
        for option in OPTIONS:
            if not option.in_flake8:
                continue
            value = getattr(options, f"idemlint_{option.field}", None)
            if option.kind == "choice":
                if value:
                    values[option.field] = value
            else:
                values[option.field] = bool(value) if option.kind == "bool" else tuple(value or ())
        cls._config = Config(**values)

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        try:
            from idemlint.api import check_text, visible
            from idemlint.config import Config
            from idemlint.printable import printable
            from idemlint.rules import ALL_RULES

            if Plugin._project is None:
                from idemlint.api import stored_project_index

                Plugin._project, stale = stored_project_index(self.filename)
                if stale:  # once a process: the cross-module findings are silently missing otherwise
                    print(
                        "idemlint: the project index stored by `idemlint check` is out of date (files changed "
                        "since): findings that follow calls into other modules are missing until it runs again",
                        file=sys.stderr,
                    )
            source = "".join(self.lines)
            config = self._config or Config()
            result = check_text(source, self.filename, config, ALL_RULES, project=Plugin._project, unused_noqa=False)
            for message in result.errors:
                print(f"idemlint: {printable(message)}", file=sys.stderr)
            for finding in filter(visible(config.min_confidence, config.min_stakes), result.findings):
                yield finding.line, finding.col - 1, f"{finding.code} {finding.message}", type(self)
        except Exception as error:  # never let one file abort the whole flake8 run
            yield 1, 0, f"IDM900 idemlint could not check this file: {type(error).__name__}: {error}", type(self)
