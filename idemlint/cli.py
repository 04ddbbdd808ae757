"""The `idemlint` command: its subcommands and options, declared for click.

Thin on purpose: the options' help is the README's Usage (`python -m idemlint.docs`), what
they mean together is idemlint.check_command's, the work is idemlint.api's, and what is
printed is idemlint.console's.

Exit codes: 0 no findings, 1 findings, 2 usage error, bad configuration, a path that
does not exist or cannot be read, or an internal error in a rule.
"""

from __future__ import annotations

import sys
from typing import Any

import click

from idemlint import __version__
from idemlint.calibration import CONFIDENCE_LEVELS
from idemlint.console import EXIT_CLEAN, EXIT_ERROR, colour, emit, print_errors, print_warnings, usage_error, writable
from idemlint.output import FORMATS as REPORT_FORMATS


class _Jobs(click.ParamType):
    """`-j 4`, `-j 0` or `-j auto` (as ruff and pytest-xdist spell it): auto is 0, one per CPU."""

    name = "N|auto"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> int:
        text = str(value).strip()
        if text.isdigit():
            return int(text)
        if text.lower() == "auto":
            return 0
        self.fail(f"{value!r} is not a number of workers or `auto`", param, ctx)


JOBS = _Jobs()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="idemlint")
def cli() -> None:
    """Find the bugs that make retried requests do things twice."""


@cli.command(short_help="Check PATHS for idempotency and retry bugs.")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--select", help="Codes or prefixes to enable, comma-separated (replaces the configured selection): IDM0,IDM101."
)
@click.option("--ignore", help="Codes or prefixes to disable, comma-separated.")
@click.option("--extend-select", help="Codes or prefixes to enable on top of the selection.")
@click.option("--extend-ignore", help="Codes or prefixes to disable on top of the ignores.")
@click.option(
    "--output-format",
    "--format",
    "output_format",
    type=click.Choice(REPORT_FORMATS),
    default="text",
    show_default=True,
    help="Report format (`--format` is an alias).",
)
@click.option("--output", "-o", "output_file", type=click.Path(), help="Write the report to this file.")
@click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="Colour the text report (auto: on a terminal, unless NO_COLOR is set).",
)
@click.option("--exit-zero", is_flag=True, help="Exit 0 even when there are findings.")
@click.option("--quiet", "-q", is_flag=True, help="Print findings only, no summary line.")
@click.option("--statistics", is_flag=True, help="Print the number of findings per code.")
@click.option("--force-exclude", is_flag=True, help="Apply exclude settings to files named on the command line too.")
@click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), help="Read [tool.idemlint] from this pyproject.toml."
)
@click.option("--fix", "apply_fixes", is_flag=True, help="Apply safe fixes in place.")
@click.option("--unsafe-fixes", is_flag=True, help="With --fix or --diff, also apply fixes that may change behaviour.")
@click.option(
    "--diff", "show_diff", is_flag=True, help="Print the fixes as a unified diff; write nothing (exit 1 if any)."
)
@click.option("--jobs", "-j", type=JOBS, help="Worker processes: a number, or `auto` (the default, as 0: one per CPU).")
@click.option("--isolated", is_flag=True, help="Ignore every configuration file.")
@click.option(
    "--stdin-filename",
    help="With PATH `-`: check standard input as if it were this file (config, per-file-ignores, test skips).",
)
@click.option(
    "--show-settings", is_flag=True, help="Print the configuration in force and where it came from; check nothing."
)
@click.option(
    "--show-files", is_flag=True, help="Print the files that would be checked and those skipped; check nothing."
)
@click.option("--fix-only", is_flag=True, help="Apply safe fixes and report nothing else.")
@click.option("--show-fixes", is_flag=True, help="List the fixes that --fix applied.")
@click.option(
    "--add-noqa", is_flag=True, help="Add `# noqa: CODE` to every line with a finding (instead of a baseline)."
)
@click.option(
    "--show-source/--no-show-source",
    default=None,
    help="Show the offending line with a caret under it (default: on a terminal).",
)
@click.option(
    "--exclude", "cli_exclude", help="Comma-separated gitignore-style patterns; replaces the default excludes."
)
@click.option(
    "--extend-exclude", "cli_extend_exclude", help="Comma-separated patterns excluded on top of the defaults."
)
@click.option(
    "--per-file-ignores",
    "cli_per_file_ignores",
    multiple=True,
    help="PATTERN:CODES, e.g. 'legacy/*:IDM0,IDM101' (repeatable); added to the configured ones.",
)
@click.option(
    "--exit-non-zero-on-fix", is_flag=True, help="With --fix: exit 1 if anything was fixed, even when nothing is left."
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Do not read or write the cache (in the user cache folder; IDEMLINT_CACHE_DIR moves it).",
)
@click.option(
    "--min-confidence",
    type=click.Choice(CONFIDENCE_LEVELS),
    help="Hide findings less sure than this (default: show high, and medium where measured at least 85% true).",
)
@click.option(
    "--min-stakes",
    type=click.Choice(["none", "state", "external"]),
    help="Hide findings with less at stake: state (stored state) or external (money, another system). Default: none.",
)
@click.option(
    "--write-baseline", type=click.Path(dir_okay=False), help="Record the current findings in this file and exit 0."
)
@click.option(
    "--baseline",
    "baseline_file",
    type=click.Path(dir_okay=False),
    help="Report only findings not recorded in this baseline file.",
)
@click.option(
    "--update-baseline",
    is_flag=True,
    help="With --baseline: drop its stale entries (fixed or moved findings) and add nothing.",
)
def check(**options: Any) -> None:
    """Check PATHS (default: the current directory) for idempotency and retry bugs."""
    from idemlint.check_command import CheckOptions, run_check

    run_check(CheckOptions(**options))


@cli.command(short_help="List side-effecting external calls and their retry safety.")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True
)
@click.option("--output", "-o", "output_file", type=click.Path(), help="Write the inventory to a file.")
@click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), help="Read [tool.idemlint] from this pyproject.toml."
)
@click.option("--no-cache", is_flag=True, help="Audit every file again instead of reusing unchanged files' rows.")
def audit(
    paths: tuple[str, ...], output_format: str, output_file: str | None, config_file: str | None, no_cache: bool
) -> None:
    """List every side-effecting external call: key sent? retried? what a timeout does."""
    from idemlint.api import build_project_index, discover_files, load_config
    from idemlint.audit import audit_paths
    from idemlint.audit_formats import FORMATS, format_text
    from idemlint.config import ConfigError
    from idemlint.rules import ALL_RULES

    paths = paths or (".",)
    try:
        config = load_config(paths, config_file)
    except ConfigError as error:
        usage_error(str(error))
    if output_file:
        writable(output_file)
    found = discover_files(paths, config)
    project = build_project_index(config, ALL_RULES, found, paths, cache=not no_cache)
    from idemlint.console import progress_bar
    from idemlint.runner import default_cache_dir

    bar = progress_bar(verb="audited") if sys.stderr.isatty() else None
    cache_dir = None if no_cache else default_cache_dir(config.root)
    rows, errors = audit_paths(found.to_check(config.check_tests), config, project, cache_dir, bar)
    if output_format == "text":
        report = format_text(rows, output_file is None and colour("auto"))
    else:
        report = FORMATS[output_format](rows)  # type: ignore[operator]
    emit(report, output_file)
    print_errors([*found.errors, *errors])
    print_warnings(found.skipped)
    sys.exit(EXIT_ERROR if found.errors or errors else EXIT_CLEAN)


def _measured(code: str) -> dict[str, object] | None:
    """The rule's precision on hand-judged real code (idemlint.calibration), or None."""
    from idemlint.calibration import rule_precision

    found = rule_precision(code)
    return None if found is None else {"true": found[0], "judged": found[1], "precision": round(found[0] / found[1], 3)}


@cli.command(short_help="List every rule: code, name and what it flags.")
@click.option("--output-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def rules(output_format: str) -> None:
    """List every rule: code, name and what it flags."""
    from idemlint.registry import RESERVED
    from idemlint.rules import ALL_RULES

    if output_format == "json":
        import json

        described = [
            {
                "code": r.code,
                "name": r.name,
                "family": r.code[:4] + "xx",
                "severity": r.severity,
                "confidence": r.confidence,
                "measured": _measured(r.code),
                "fixable": "Safe fix" in r.fix_safety or "Unsafe fix" in r.fix_safety,
                "summary": r.summary,
            }
            for r in ALL_RULES
        ]
        click.echo(json.dumps(described, indent=2))
        return

    rows = [(r.code, r.name, r.summary) for r in ALL_RULES]
    rows += [(code, name, summary) for code, (name, summary) in sorted(RESERVED.items())]
    width = max(len(name) for _, name, _ in rows)
    for code, name, summary in rows:
        click.echo(f"{code}  {name:<{width}}  {summary}")


@cli.command(short_help="Print a rule's full documentation.")
@click.argument("code")
def explain(code: str) -> None:
    """Print a rule's full documentation. CODE is a rule code or name, such as IDM001 or clock-in-key."""
    from idemlint.explain import render
    from idemlint.registry import rule_by_code_or_name

    rule = rule_by_code_or_name(code)
    if rule is not None:
        click.echo(render(rule), nl=False)
        return
    click.echo(f"idemlint: unknown rule {code!r}; `idemlint rules` lists them", err=True)
    sys.exit(EXIT_ERROR)


@cli.command(short_help="Print the state machines the project declares or implies, as IDM103 reads them.")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), help="Read [tool.idemlint] from this pyproject.toml."
)
def states(paths: tuple[str, ...], config_file: str | None) -> None:
    """Print each state machine declared under PATHS (default: the current directory): a table
    of one enum's moves or `@transition` decorators, its final states, and the states every
    state leads to (IDM103 does not report writes of those with no precondition). Then the
    final states the project's guards imply where it declares no machine, as IDM103 uses
    them: a state some guard gives up on and no guarded move leaves, the machine's only one,
    with every other state it writes or tests left by a guarded move."""
    from idemlint.analysis.final_states import Evidence, describe_finals, join_evidence, state_evidence
    from idemlint.analysis.machines import declared_moves, describe, join
    from idemlint.api import discover_files, load_config
    from idemlint.config import ConfigError
    from idemlint.printable import printable
    from idemlint.reading import read_source

    paths = paths or (".",)
    try:
        config = load_config(paths, config_file)
    except ConfigError as error:
        usage_error(str(error))
    found = discover_files(paths, config)
    declared: list[dict[str, dict[str, frozenset[str]]]] = []
    tested: list[Evidence] = []
    where: dict[str, list[str]] = {}
    for path, shown in found.to_check(check_tests=False):
        try:
            source = read_source(path)
        except OSError:
            continue
        moves = declared_moves(source, shown)
        declared.append(moves)
        tested.append(state_evidence(source, shown))
        for name in moves:
            where.setdefault(name.partition("@")[0], []).append(shown)  # a column's, by any class
    machines = join(declared)
    lines = describe(machines, where) or [
        "No state machine declared (a table of one enum's moves, or @transition decorators)."
    ]
    lines += describe_finals({n: f for n, f in join_evidence(tested).items() if n not in machines})
    click.echo("\n".join(printable(line) for line in lines))  # states may be any string
    print_errors(found.errors)
    sys.exit(EXIT_ERROR if found.errors else EXIT_CLEAN)


@cli.command(short_help="Run the language server (LSP) on stdin/stdout, for editors.")
@click.option(
    "--stdio", is_flag=True, hidden=True, help="Accepted for editors that pass it; stdio is the only transport."
)
def server(stdio: bool) -> None:
    """Run idemlint's language server on stdin/stdout. Needs the `server` extra:
    pip install 'idemlint[server]'. See docs/editors.md."""
    try:
        from idemlint.server import serve
    except ModuleNotFoundError as error:
        if (error.name or "").partition(".")[0] not in ("pygls", "lsprotocol", "cattrs"):
            raise
        click.echo("idemlint: the language server needs pygls: pip install 'idemlint[server]'", err=True)
        sys.exit(EXIT_ERROR)
    serve()


def main() -> None:
    cli()
