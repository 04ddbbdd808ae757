"""Regenerate docs/rules.md, the README's rules table and its Usage from the code.

`python -m idemlint.docs` rewrites them; `python -m idemlint.docs --check` fails when they
are stale (the test suite runs the same comparison).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from idemlint.explain import render_rules_page, render_rules_table
from idemlint.rules import ALL_RULES

TABLE = re.compile(r"(<!-- rules-table:start -->\n).*?(<!-- rules-table:end -->)", re.DOTALL)
USAGE = re.compile(r"(<!-- usage:start -->\n).*?(<!-- usage:end -->)", re.DOTALL)


def render_usage() -> str:
    """Every command's `--help`, as click prints it at 100 columns: the README's Usage."""
    import click

    from idemlint.cli import cli

    blocks = []
    settings = {**cli.context_settings, "terminal_width": 100, "max_content_width": 100}
    with click.Context(cli, info_name="idemlint", **settings) as parent:
        for name in ("check", "audit", "rules", "explain", "states", "server"):
            command = cli.commands[name]
            with click.Context(command, info_name=name, parent=parent) as ctx:
                blocks.append(command.get_help(ctx))
    return "```console\n" + "\n\n".join(blocks) + "\n```\n"


def expected_files(root: Path) -> dict[Path, str]:
    readme = root / "README.md"
    current = readme.read_text(encoding="utf-8") if readme.exists() else ""
    table = render_rules_table(ALL_RULES, link_prefix="docs/rules.md")
    return {
        root / "docs" / "rules.md": render_rules_page(ALL_RULES),
        readme: USAGE.sub(
            lambda m: m.group(1) + render_usage() + m.group(2),
            TABLE.sub(lambda m: m.group(1) + table + m.group(2), current),
        ),
    }


def main(argv: list[str]) -> int:
    root = Path.cwd()
    stale = []
    for path, text in expected_files(root).items():
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            stale.append(path)
            if "--check" not in argv:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
    if stale and "--check" in argv:
        print(f"out of date: {', '.join(map(str, stale))}; run `python -m idemlint.docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
