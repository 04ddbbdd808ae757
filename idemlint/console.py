"""What the `idemlint` command prints and how it stops: reports, listings, progress, exit codes.

Kept apart from idemlint.api (which never prints or exits) and from the option handling in
idemlint.check_command, so each of the three reads on its own.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from idemlint.printable import printable

if TYPE_CHECKING:
    from idemlint.config import Config
    from idemlint.files import Discovery
    from idemlint.finding import Finding
    from idemlint.rule import Rule

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def usage_error(message: str) -> NoReturn:
    click.echo(f"idemlint: {printable(message)}", err=True)
    sys.exit(EXIT_ERROR)


def print_errors(errors: Sequence[str]) -> None:
    """One line each: an error names paths and values the repository chose (printable.py)."""
    for message in errors:
        click.echo(f"idemlint: {printable(message)}", err=True)


def print_warnings(warnings: Sequence[str]) -> None:
    """One line each, on stderr; a warning does not change the exit code."""
    for message in warnings:
        click.echo(f"idemlint: warning: {printable(message)}", err=True)


def colour(choice: str) -> bool:
    """--color always|never, else NO_COLOR (https://no-color.org), FORCE_COLOR, and whether stdout is a terminal."""
    import os

    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def progress_bar(clock: Callable[[], float] | None = None, verb: str = "checked") -> Callable[[int, int], None]:
    """`checked 120/4338 files (3 s)` on stderr, for runs over a second, at most ten times a second."""
    import time

    clock = clock or time.monotonic
    started = clock()
    state = {"last": 0.0, "shown": False}

    def show(done: int, total: int) -> None:
        now = clock()
        if done < 0:
            if state["shown"]:
                click.echo("\r\x1b[2K", nl=False, err=True, color=True)  # erase the line
            return
        if now - started < 1 or now - state["last"] < 0.1 and done != total:
            return
        state["last"], state["shown"] = now, True
        click.echo(f"\r{verb} {done}/{total} files ({now - started:.0f} s)", nl=False, err=True)

    return show


def writable(output: str) -> None:
    """Create the folder an output file goes to (as ruff does), or stop with one line."""
    try:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        usage_error(f"{output}: cannot create its folder: {error.strerror or error}")
    if Path(output).is_dir():
        usage_error(f"{output}: is a directory")


def emit(report: str, output_file: str | None, coloured: bool = False) -> None:
    """The report on stdout, or in `output_file`."""
    if not output_file:
        click.echo(report, nl=False, color=coloured or None)
        return
    writable(output_file)
    try:
        Path(output_file).write_text(report, encoding="utf-8")
    except OSError as error:
        usage_error(f"{output_file}: cannot write: {(error.strerror or str(error)).lower()}")


def render_report(
    findings: list[Finding],
    output_format: str,
    coloured: bool,
    found: Discovery,
    root: Path,
    show_source: bool,
    unsafe_fixes: bool,
    check_tests: bool = False,
) -> str:
    """The findings in the chosen format. CI formats get root-relative paths: CI systems read
    paths from the repository root, whatever folder idemlint ran from."""
    from idemlint.api import anchored, source_lines
    from idemlint.output import ReportContext, for_ci, get_formatter

    ci = for_ci(output_format)
    context = ReportContext(
        root=root,
        checked=[found.anchors.get(shown, shown) if ci else shown for _path, shown in found.to_check(check_tests)],
        sources=source_lines(found.files, findings) if show_source and output_format == "text" else None,
    )
    report = get_formatter(output_format)(anchored(findings, found) if ci else findings, coloured, context)
    return report + fixable_summary(findings, unsafe_fixes) if output_format == "text" else report


def fixable_summary(findings: list[Finding], unsafe: bool) -> str:
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safe)
    more = sum(1 for f in findings if f.fix is not None and not f.fix.safe)
    if unsafe:  # --unsafe-fixes: they are fixable too
        safe, more = safe + more, 0
    if not safe and not more:
        return ""
    if not safe:  # as ruff says it: no "[*] 0 fixable" line
        return f"No safe fixes available ({more} hidden fix{'es' * (more != 1)} with `--fix --unsafe-fixes`).\n"
    text = f"[*] {safe} fixable with `--fix`"
    if more and not unsafe:
        text += f" ({more} more with `--fix --unsafe-fixes`)"
    return text + ".\n"


def fixes_applied(before: list[Finding], after: list[Finding]) -> str:
    """`--show-fixes`: the fixable findings of before that are gone after fixing."""
    left = {(f.path, f.code, f.fingerprint) for f in after}
    lines = [
        f"fixed {f.path}:{f.line}: {f.code} {f.fix.description}"
        for f in before
        if f.fix is not None and (f.path, f.code, f.fingerprint) not in left
    ]
    return "".join(line + "\n" for line in lines)


def print_statistics(findings: list[Finding], err: bool, stale: int | None) -> None:
    """`--statistics`: findings per code, and the baseline's stale entries when one is in use."""
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.code] = counts.get(finding.code, 0) + 1
    for code, count in sorted(counts.items()):
        click.echo(f"{count:6d}  {code}", err=err)
    if stale is not None:
        click.echo(f"{stale:6d}  stale baseline entries (fixed or moved findings; rewrite the baseline)", err=err)


def print_summary(
    findings: list[Finding], checked: int, skipped: int, found: Discovery, hidden: int = 0, unparsed: int = 0
) -> None:
    summary = (
        f"Found {len(findings)} finding{'s' * (len(findings) != 1)} in {checked} file{'s' * (checked != 1)} checked"
    )
    if unparsed:  # the pre-filter: a syntax error in these goes unreported, so say they were not read whole
        summary += f" ({unparsed} with none of the rules' words, not parsed)"
    if hidden:  # as ruff tells of the fixes --unsafe-fixes would add: never dropped in silence
        summary += (
            f"; {hidden} hidden as less sure or less at stake (`--min-confidence low --min-stakes none` shows them)"
        )
    if skipped:
        summary += f"; skipped {skipped} test file{'s' * (skipped != 1)} (`check-tests = true` to include them)"
    click.echo(summary + ".")
    if not found.files and not found.errors:
        click.echo("idemlint: no Python files found under the given paths", err=True)


def print_settings(config: Config, rules: list[type[Rule]]) -> None:
    """`--show-settings`: every option in force, its value, and the file it came from."""
    from dataclasses import fields

    click.echo(f"configuration: {config.source or '(none: defaults)'}")
    click.echo(f"project root:  {config.root}")
    for item in fields(config):
        if item.name in ("root", "source"):
            continue
        value = getattr(config, item.name)
        shown = (
            ", ".join(map(str, value))
            if isinstance(value, tuple) and value and not isinstance(value[0], tuple)
            else value
        )
        click.echo(f"{item.name.replace('_', '-'):<24} {shown if shown != () else '(none)'}")
    click.echo(f"{'enabled rules':<24} {', '.join(rule.code for rule in rules)}")


def print_files(found: Discovery, config: Config) -> None:
    """`--show-files`: the files that would be checked, then those skipped and why."""
    checked = found.to_check(config.check_tests)
    for _path, shown in checked:
        click.echo(shown)
    for _path, shown in found.skipped_tests(config.check_tests):
        click.echo(f"{shown}  (skipped: test file; `check-tests = true` to include)")
    print_errors(found.errors)
