"""`idemlint check`: what its options mean together, then the run, step by step.

cli.py declares the options (their help is the README's Usage); this module refuses
combinations that would silently ignore an option, folds the command line into the
configuration, and drives idemlint.api; idemlint.console prints.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from idemlint import api
from idemlint.console import (
    EXIT_CLEAN,
    EXIT_ERROR,
    EXIT_FINDINGS,
    colour,
    emit,
    fixes_applied,
    print_errors,
    print_files,
    print_settings,
    print_statistics,
    print_summary,
    print_warnings,
    progress_bar,
    render_report,
    usage_error,
    writable,
)

if TYPE_CHECKING:
    from idemlint.config import Config
    from idemlint.files import Discovery
    from idemlint.finding import Finding
    from idemlint.paths import Resolver
    from idemlint.rule import Rule


@dataclass(frozen=True)
class CheckOptions:
    """The command line of `idemlint check`, as click parsed it (names as in cli.py)."""

    paths: tuple[str, ...]
    select: str | None
    ignore: str | None
    extend_select: str | None
    extend_ignore: str | None
    output_format: str
    output_file: str | None
    color: str
    exit_zero: bool
    quiet: bool
    statistics: bool
    force_exclude: bool
    config_file: str | None
    apply_fixes: bool
    unsafe_fixes: bool
    show_diff: bool
    jobs: int | None
    isolated: bool
    stdin_filename: str | None
    show_settings: bool
    show_files: bool
    fix_only: bool
    show_fixes: bool
    add_noqa: bool
    show_source: bool | None
    cli_exclude: str | None
    cli_extend_exclude: str | None
    cli_per_file_ignores: tuple[str, ...]
    exit_non_zero_on_fix: bool
    no_cache: bool
    min_confidence: str | None
    min_stakes: str | None
    write_baseline: str | None
    baseline_file: str | None
    update_baseline: bool


def run_check(o: CheckOptions) -> NoReturn:
    from idemlint.registry import enabled_rows, enabled_rules

    stdin = o.paths == ("-",)
    _refuse_conflicts(o, stdin)
    paths = (o.stdin_filename or "stdin.py",) if stdin else o.paths or (".",)
    from idemlint.paths import Resolver

    resolver = Resolver()  # one run's path resolutions: the root's, discovery's, the listing's
    config = _configured(o, paths, resolver)
    confident = api.visible(config.min_confidence, config.min_stakes)
    if stdin:
        _check_stdin(o, paths[0], config, enabled_rules(config.selected, config.ignored), confident)

    _timing("configuration", 0)
    found = api.discover_files(paths, config, o.force_exclude, resolver)
    print_warnings(found.skipped)
    _timing("discovery", len(found.files))
    if o.show_settings:
        print_settings(config, enabled_rules(config.selected, config.ignored))
        sys.exit(EXIT_CLEAN)
    if o.show_files:
        print_files(found, config)
        sys.exit(EXIT_ERROR if found.errors else EXIT_CLEAN)
    files = found.to_check(config.check_tests)
    # A warm run (every file in the cache) needs neither the rule classes nor the project
    # index: see api.cached_results. Fixes need both, so they take the full path.
    fixing = o.apply_fixes or o.fix_only or o.show_diff
    warm = None
    if not o.no_cache and not fixing:
        warm = api.cached_results(found, config, enabled_rows(config.selected, config.ignored), paths)
    rules: list[type[Rule]] = []
    project = api.EMPTY
    if warm is not None:
        outcome = warm
        _timing("warm (all cached)", len(files))
    else:
        rules = enabled_rules(config.selected, config.ignored)
        project = api.build_project_index(config, rules, found, paths, cache=not o.no_cache)
        _timing("project index", len(files))
        bar = progress_bar() if not o.quiet and sys.stderr.isatty() else None
        outcome = api.check_files(found, config, rules, project, o.jobs or None, not o.no_cache, bar)  # jobs 0: per CPU
        if bar is not None:
            bar(-1, -1)  # clear the line
        _timing(f"checked ({outcome.cached} cached)", len(files))
    errors = [*found.errors, *outcome.errors]
    findings, diffs, fixed = outcome.findings, [], 0
    if fixing:
        before = [f for f in findings if f.fix is not None and (f.fix.safe or o.unsafe_fixes)]
        fixes = api.fix_files(findings, config, rules, found, project, o.unsafe_fixes, write=not o.show_diff)
        if not o.show_diff and fixes.applied:
            n, files_fixed = fixes.applied, fixes.files
            click.echo(
                f"idemlint: fixed {n} finding{'s' * (n != 1)} in {files_fixed} file{'s' * (files_fixed != 1)}",
                err=True,
            )
        findings, diffs, fixed = fixes.findings, fixes.diffs, fixes.applied
        errors.extend(fixes.errors)
        if o.show_fixes and fixed:
            click.echo(fixes_applied(before, findings), err=True, nl=False)
    if o.fix_only:
        print_errors(errors)
        sys.exit(EXIT_ERROR if errors else EXIT_FINDINGS if o.exit_non_zero_on_fix and fixed else EXIT_CLEAN)
    if o.add_noqa:  # on what is shown: a hidden finding gets no comment a reader cannot explain
        _add_noqa(files, [f for f in findings if confident(f)], config.root)
    if o.write_baseline:
        _write_baseline(o.write_baseline, findings, found, errors)
    stale = None
    if o.baseline_file:
        findings, stale = _apply_baseline(o, findings, found, rules or enabled_rules(config.selected, config.ignored))
    shown = [f for f in findings if confident(f)]
    hidden, findings = len(findings) - len(shown), shown

    if o.show_diff:
        click.echo("".join(diffs), nl=False)
        print_errors(errors)
        sys.exit(EXIT_ERROR if errors else EXIT_FINDINGS if diffs and not o.exit_zero else EXIT_CLEAN)
    coloured = o.output_file is None and colour(o.color)
    show_source = o.show_source if o.show_source is not None else o.output_file is None and sys.stdout.isatty()
    if o.statistics and not o.output_file:  # as ruff: the table instead of the findings
        print_statistics(findings, False, stale)
    else:
        report = render_report(
            findings, o.output_format, coloured, found, config.root, show_source, o.unsafe_fixes, config.check_tests
        )
        emit(report, o.output_file, coloured)
        if o.statistics:
            print_statistics(findings, False, stale)
    print_errors(errors)
    if not o.quiet and o.output_format == "text" and not o.statistics and (found.files or not found.errors):
        print_summary(findings, len(files), len(found.files) - len(files), found, hidden, outcome.unparsed)
    if errors:
        sys.exit(EXIT_ERROR)
    if o.exit_non_zero_on_fix and fixed:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_FINDINGS if findings and not o.exit_zero else EXIT_CLEAN)


_LAST = [0.0]


def _timing(step: str, files: int) -> None:
    """With IDEMLINT_TIMING set: each step's time since the last (the first since the process
    started) and per file, on standard error (benchmarks/run.py reads them)."""
    import os
    import time

    if not os.environ.get("IDEMLINT_TIMING"):
        return
    now = time.perf_counter()
    if not _LAST[0]:
        _LAST[0] = now - (time.time() - _started())
    spent, _LAST[0] = now - _LAST[0], now
    per_file = f"  {spent / files * 1e6:.1f} us/file" if files else ""
    click.echo(f"idemlint timing: {step:<24} {spent * 1000:8.1f} ms{per_file}", err=True)


def _started() -> float:
    """When this process started (wall clock), from /proc where there is one."""
    import os
    import time

    try:
        with open("/proc/self/stat") as handle:
            ticks = int(handle.read().rpartition(")")[2].split()[19])
        with open("/proc/uptime") as handle:
            uptime = float(handle.read().split()[0])
        return time.time() - uptime + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.time()


def _refuse_conflicts(o: CheckOptions, stdin: bool) -> None:
    """Options that would be silently ignored in this combination: a usage error instead."""
    if ("-" in o.paths or o.stdin_filename) and not stdin:
        usage_error("standard input is checked alone: `idemlint check - --stdin-filename PATH`")
    if stdin and (o.show_diff or o.write_baseline or o.baseline_file or o.add_noqa or o.fix_only):
        usage_error("with standard input, --diff, --fix-only, --add-noqa and baselines do not apply: use --fix")
    if o.add_noqa and (o.show_diff or o.apply_fixes or o.fix_only or o.write_baseline or o.baseline_file):
        usage_error("--add-noqa rewrites files on its own: it takes no --diff, --fix or baseline")
    if (o.show_fixes or o.exit_non_zero_on_fix) and not (o.apply_fixes or o.fix_only):
        usage_error("--show-fixes and --exit-non-zero-on-fix go with --fix or --fix-only")


def _configured(o: CheckOptions, paths: tuple[str, ...], resolver: Resolver | None = None) -> Config:
    """The configuration in force with the command line's selection, excludes and
    per-file-ignores folded in; a usage error for a bad value (checked after the configuration
    loads, so a broken configuration file is reported first)."""
    from idemlint.config import ConfigError
    from idemlint.registry import validate_codes

    try:
        config = api.load_config(paths, o.config_file, o.isolated, resolver=resolver)
    except ConfigError as error:
        usage_error(str(error))
    select, ignore = _codes(o.select), _codes(o.ignore)
    extend_select, extend_ignore = _codes(o.extend_select), _codes(o.extend_ignore)
    if select == ():
        usage_error('--select "": name at least one code or prefix (or leave --select out to select all)')
    if o.update_baseline and (not o.baseline_file or o.write_baseline):
        usage_error("--update-baseline needs --baseline FILE (and no --write-baseline)")
    if o.unsafe_fixes and not (o.apply_fixes or o.show_diff or o.fix_only):
        usage_error("--unsafe-fixes only works with --fix or --diff")
    if o.fix_only and o.show_diff:
        usage_error("--fix-only applies fixes and --diff writes none: choose one")
    if o.show_diff and (o.output_file or o.output_format != "text"):
        usage_error("--diff prints a unified diff to standard output; it takes no --output or --format")
    named = (("--select", select), ("--ignore", ignore), ("--extend-select", extend_select))
    for option, codes in (*named, ("--extend-ignore", extend_ignore)):
        bad = validate_codes(codes or ())
        if bad:
            usage_error(f"{option}: unknown rule code or prefix {', '.join(bad)}")
    # As in ruff, the command line's --select replaces the configured selection (its ignores and
    # extensions included); --extend-select and --extend-ignore add to whatever is in force.
    replaced = select is not None
    config = config.with_overrides(
        select=select,
        ignore=ignore if ignore is not None or not replaced else (),
        extend_select=(*(() if replaced else config.extend_select), *(extend_select or ())),
        extend_ignore=(*(() if replaced else config.extend_ignore), *(extend_ignore or ())),
    )
    from idemlint.config import wildcard_problem

    for option, patterns in (
        ("--exclude", _patterns(o.cli_exclude) or ()),
        ("--extend-exclude", _patterns(o.cli_extend_exclude) or ()),
        ("--per-file-ignores", [value.rpartition(":")[0] for value in o.cli_per_file_ignores]),
    ):
        problem = wildcard_problem(patterns, option)
        if problem is not None:
            usage_error(problem)
    return config.with_overrides(
        exclude=_patterns(o.cli_exclude),
        extend_exclude=(*config.extend_exclude, *(_patterns(o.cli_extend_exclude) or ())),
        per_file_ignores=(*config.per_file_ignores, *_per_file_ignores(o.cli_per_file_ignores)),
        min_confidence=o.min_confidence,
        min_stakes=o.min_stakes,
    )


def _codes(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(c.strip().upper() for c in value.split(",") if c.strip())


def _patterns(value: str | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(p.strip() for p in value.split(",") if p.strip())


def _per_file_ignores(values: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    from idemlint.registry import validate_codes

    out = []
    for value in values:
        pattern, _, codes = value.rpartition(":")
        parsed = _codes(codes) or ()
        if not pattern or not parsed:
            usage_error(f"--per-file-ignores {value!r}: expected PATTERN:CODES, e.g. 'legacy/*:IDM0'")
        bad = validate_codes(parsed)
        if bad:
            usage_error(f"--per-file-ignores: unknown rule code or prefix {', '.join(bad)}")
        out.append((pattern, parsed))
    return tuple(out)


def _check_stdin(
    o: CheckOptions, shown: str, config: Config, rules: list[type[Rule]], confident: Callable[[Finding], bool]
) -> NoReturn:
    """`idemlint check - --stdin-filename app/pay.py`: the buffer, judged as that file would be
    (the configuration and selection in force, per-file-ignores, test status); with --fix, the
    fixed text on stdout."""
    from idemlint.output import PLAIN, ReportContext, get_formatter
    from idemlint.parsing import decode

    kind, anchor = api.kind_and_anchor(Path(shown).absolute(), config)
    source = sys.stdin.buffer.read()
    if o.apply_fixes:
        outcome = api.fix_text(decode(source), shown, config, rules, o.unsafe_fixes, kind, anchor or shown)
        sys.stdout.write(outcome.text)
        print_errors([outcome.error] if outcome.error else [])
        left = [f for f in outcome.findings if confident(f)]
        # stdout holds the fixed text, so what the fixes left goes to stderr, as ruff does
        click.echo(get_formatter("concise")(left, False, PLAIN), err=True, nl=False)
        sys.exit(EXIT_FINDINGS if left and not o.exit_zero else EXIT_CLEAN)
    result = api.check_text(source, shown, config, rules, kind, anchor or shown)
    findings = [f for f in result.findings if confident(f)]
    context = ReportContext(root=config.root, checked=[anchor or shown])
    emit(get_formatter(o.output_format)(findings, False, context), o.output_file)
    print_errors(result.errors)
    sys.exit(EXIT_ERROR if result.errors else EXIT_FINDINGS if findings and not o.exit_zero else EXIT_CLEAN)


def _add_noqa(files: list[tuple[Path, str]], findings: list[Finding], root: Path) -> NoReturn:
    """`--add-noqa`: a `# noqa: CODE` on each reported line, files rewritten in place."""
    total, errors = api.add_noqa(files, findings, root)
    click.echo(f"idemlint: added noqa comments to {total} line{'s' * (total != 1)}", err=True)
    print_errors(errors)
    sys.exit(EXIT_ERROR if errors else EXIT_CLEAN)


def _write_baseline(path: str, findings: list[Finding], found: Discovery, errors: list[str]) -> NoReturn:
    writable(path)
    try:
        api.write_baseline(Path(path), findings, found)
    except OSError as error:
        usage_error(f"{path}: cannot write: {(error.strerror or str(error)).lower()}")
    click.echo(f"idemlint: wrote {len(findings)} findings to {path}", err=True)
    sys.exit(EXIT_ERROR if errors else EXIT_CLEAN)


def _apply_baseline(
    o: CheckOptions, findings: list[Finding], found: Discovery, rules: list[type[Rule]]
) -> tuple[list[Finding], int]:
    """The findings the baseline does not hold, and its stale entries (see api.apply_baseline)."""
    from idemlint.baseline import BaselineError

    path = Path(o.baseline_file or "")
    try:
        outcome = api.apply_baseline(path, findings, found, rules, o.update_baseline)
    except (BaselineError, OSError, ValueError, KeyError) as error:
        usage_error(str(error) if isinstance(error, BaselineError) else f"{path}: cannot update: {error}")
    if outcome.dropped is not None:
        dropped = outcome.dropped
        click.echo(f"idemlint: dropped {dropped} stale entr{'ies' if dropped != 1 else 'y'} from {path}", err=True)
    hidden, stale = outcome.hidden, outcome.stale
    if not o.quiet and (hidden or stale):
        click.echo(
            f"idemlint: {hidden} finding{'s' * (hidden != 1)} hidden by the baseline, "
            f"{stale} stale entr{'ies' if stale != 1 else 'y'}"
            + (" (`--update-baseline` drops them)" if stale else ""),
            err=True,
        )
    return outcome.findings, stale
