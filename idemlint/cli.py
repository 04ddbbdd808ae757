"""The `idemlint` command. Thin: discovery, engine and formatters do the work.

Exit codes: 0 no findings, 1 findings, 2 usage error, bad configuration, a path that
does not exist or cannot be read, or an internal error in a rule.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import click

from idemlint import __version__
from idemlint.output import FORMATS as REPORT_FORMATS

if TYPE_CHECKING:
    from idemlint.analysis.project import ProjectIndex
    from idemlint.config import Config
    from idemlint.files import Discovery
    from idemlint.finding import Finding
    from idemlint.rule import Rule

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(c.strip().upper() for c in value.split(",") if c.strip())


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
@click.option("--output", "output_file", type=click.Path(), help="Write the report to this file.")
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
@click.option("--jobs", "-j", type=click.IntRange(min=0), help="Worker processes (default and 0: one per CPU).")
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
    type=click.Choice(["low", "medium", "high"]),
    default="low",
    show_default=True,
    help="Hide findings of rules less sure than this.",
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
def check(
    paths: tuple[str, ...],
    select: str | None,
    ignore: str | None,
    extend_select: str | None,
    extend_ignore: str | None,
    output_format: str,
    output_file: str | None,
    color: str,
    exit_zero: bool,
    quiet: bool,
    statistics: bool,
    force_exclude: bool,
    config_file: str | None,
    apply_fixes: bool,
    unsafe_fixes: bool,
    show_diff: bool,
    jobs: int | None,
    isolated: bool,
    stdin_filename: str | None,
    show_settings: bool,
    show_files: bool,
    fix_only: bool,
    show_fixes: bool,
    add_noqa: bool,
    show_source: bool | None,
    cli_exclude: str | None,
    cli_extend_exclude: str | None,
    cli_per_file_ignores: tuple[str, ...],
    exit_non_zero_on_fix: bool,
    no_cache: bool,
    min_confidence: str,
    write_baseline: str | None,
    baseline_file: str | None,
    update_baseline: bool,
) -> None:
    """Check PATHS (default: the current directory) for idempotency and retry bugs."""
    from idemlint.files import discover
    from idemlint.output import get_formatter
    from idemlint.registry import enabled_rules, validate_codes
    from idemlint.runner import default_cache_dir, run

    stdin = paths == ("-",)
    if ("-" in paths or stdin_filename) and not stdin:
        _usage_error("standard input is checked alone: `idemlint check - --stdin-filename PATH`")
    if stdin and (show_diff or write_baseline or baseline_file or add_noqa or fix_only):
        _usage_error("with standard input, --diff, --fix-only, --add-noqa and baselines do not apply: use --fix")
    if add_noqa and (show_diff or apply_fixes or fix_only or write_baseline or baseline_file):
        _usage_error("--add-noqa rewrites files on its own: it takes no --diff, --fix or baseline")
    if (show_fixes or exit_non_zero_on_fix) and not (apply_fixes or fix_only):
        _usage_error("--show-fixes and --exit-non-zero-on-fix go with --fix or --fix-only")
    paths = (stdin_filename or "stdin.py",) if stdin else paths or (".",)
    config = _load_config(paths, config_file, isolated)
    cli_select, cli_ignore = _codes(select), _codes(ignore)
    cli_extend_select, cli_extend_ignore = _codes(extend_select), _codes(extend_ignore)
    if cli_select == ():
        _usage_error('--select "": name at least one code or prefix (or leave --select out to select all)')
    if update_baseline and (not baseline_file or write_baseline):
        _usage_error("--update-baseline needs --baseline FILE (and no --write-baseline)")
    if unsafe_fixes and not (apply_fixes or show_diff or fix_only):
        _usage_error("--unsafe-fixes only works with --fix or --diff")
    if fix_only and show_diff:
        _usage_error("--fix-only applies fixes and --diff writes none: choose one")
    if show_diff and (output_file or output_format != "text"):
        _usage_error("--diff prints a unified diff to standard output; it takes no --output or --format")
    for option, codes in (
        ("--select", cli_select),
        ("--ignore", cli_ignore),
        ("--extend-select", cli_extend_select),
        ("--extend-ignore", cli_extend_ignore),
    ):
        bad = validate_codes(codes or ())
        if bad:
            _usage_error(f"{option}: unknown rule code or prefix {', '.join(bad)}")
    # As in ruff, the command line's --select replaces the configured selection (its ignores and
    # extensions included); --extend-select and --extend-ignore add to whatever is in force.
    replaced = cli_select is not None
    config = config.with_overrides(
        select=cli_select,
        ignore=cli_ignore if cli_ignore is not None or not replaced else (),
        extend_select=(*(() if replaced else config.extend_select), *(cli_extend_select or ())),
        extend_ignore=(*(() if replaced else config.extend_ignore), *(cli_extend_ignore or ())),
    )
    config = config.with_overrides(
        exclude=_patterns(cli_exclude),
        extend_exclude=(*config.extend_exclude, *(_patterns(cli_extend_exclude) or ())),
        per_file_ignores=(*config.per_file_ignores, *_per_file_ignores(cli_per_file_ignores)),
    )
    rules = enabled_rules(config.selected, config.ignored)
    jobs = jobs or None  # 0: one per CPU
    apply_fixes = apply_fixes or fix_only
    rank = {"low": 0, "medium": 1, "high": 2}
    if stdin:
        _check_stdin(
            paths[0],
            config,
            rules,
            output_format,
            output_file,
            apply_fixes,
            unsafe_fixes,
            exit_zero,
            lambda f: rank.get(f.confidence, 2) >= rank[min_confidence],
        )

    found = discover(list(paths), config, force_exclude)
    if show_settings:
        _print_settings(config, rules)
        sys.exit(EXIT_CLEAN)
    if show_files:
        _print_files(found, config)
        sys.exit(EXIT_ERROR if found.errors else EXIT_CLEAN)
    files = found.to_check(config.check_tests)
    skipped = len(found.files) - len(files)
    cache_dir = None if no_cache else default_cache_dir(config.root)
    project = _project_index(config, rules, found, paths)
    bar = _progress_bar() if not quiet and sys.stderr.isatty() else None
    outcome = run(files, config, rules, jobs, cache_dir, found.kinds, project, found.anchors, bar)
    if bar is not None:
        bar(-1, -1)  # clear the line
    errors = [*found.errors, *outcome.errors]
    findings = outcome.findings
    diffs: list[str] = []
    if apply_fixes or show_diff:
        fixable_before = [f for f in findings if f.fix is not None and (f.fix.safe or unsafe_fixes)]
        findings, diffs, fix_errors, fixed = _fix(
            files, findings, config, rules, unsafe_fixes, write=not show_diff, found=found, project=project
        )
        errors.extend(fix_errors)
        fixed_report = _fixes_applied(fixable_before, findings) if fixed else ""
    else:
        fixed, fixed_report = 0, ""
    if show_fixes and fixed_report:
        click.echo(fixed_report, err=True, nl=False)
    if fix_only:
        for message in errors:
            click.echo(f"idemlint: {message}", err=True)
        sys.exit(EXIT_ERROR if errors else EXIT_FINDINGS if exit_non_zero_on_fix and fixed else EXIT_CLEAN)
    if add_noqa:
        _add_noqa(files, findings)
    if write_baseline:
        from idemlint.baseline import write_baseline as save

        _writable(write_baseline)
        try:
            save(Path(write_baseline), _anchored(findings, found))
        except OSError as error:
            _usage_error(f"{write_baseline}: cannot write: {(error.strerror or str(error)).lower()}")
        click.echo(f"idemlint: wrote {len(findings)} findings to {write_baseline}", err=True)
        sys.exit(EXIT_ERROR if errors else EXIT_CLEAN)
    stale = 0
    if baseline_file:
        findings, stale = _apply_baseline(Path(baseline_file), findings, found, rules, update_baseline, quiet)
    findings = [f for f in findings if rank.get(f.confidence, 2) >= rank[min_confidence]]

    if show_diff:
        click.echo("".join(diffs), nl=False)
        for message in errors:
            click.echo(f"idemlint: {message}", err=True)
        sys.exit(EXIT_ERROR if errors else EXIT_FINDINGS if diffs and not exit_zero else EXIT_CLEAN)
    coloured = output_file is None and _colour(color)
    if show_source is None:
        show_source = output_file is None and sys.stdout.isatty()
    if output_format == "sarif":
        from idemlint.output.sarif import format_sarif

        report = format_sarif(_anchored(findings, found), coloured, root=config.root)
    elif output_format in ("github", "gitlab", "junit"):
        # CI systems read paths from the repository root, whatever folder idemlint ran from
        report = get_formatter(output_format)(_anchored(findings, found), coloured)
    elif output_format == "text":
        from idemlint.output.text import format_text

        report = format_text(findings, coloured, _sources(files, findings) if show_source else None)
        report += _fixable_summary(findings, unsafe_fixes)
    else:
        report = get_formatter(output_format)(findings, coloured)
    _emit(report, output_file, coloured)
    for message in errors:
        click.echo(f"idemlint: {message}", err=True)
    if statistics:
        counts: dict[str, int] = {}
        for finding in findings:
            counts[finding.code] = counts.get(finding.code, 0) + 1
        for code, count in sorted(counts.items()):
            click.echo(f"{count:6d}  {code}", err=output_format != "text")
        if baseline_file:
            click.echo(
                f"{stale:6d}  stale baseline entries (fixed or moved findings; rewrite the baseline)",
                err=output_format != "text",
            )
    if not quiet and output_format == "text":
        checked = len(files)
        summary = (
            f"Found {len(findings)} finding{'s' * (len(findings) != 1)} in {checked} file{'s' * (checked != 1)} checked"
        )
        if skipped:
            summary += f"; skipped {skipped} test file{'s' * (skipped != 1)} (`check-tests = true` to include them)"
        click.echo(summary + ".")
        if not found.files and not found.errors:
            click.echo("idemlint: no Python files found under the given paths", err=True)
    if errors:
        sys.exit(EXIT_ERROR)
    if exit_non_zero_on_fix and fixed:
        sys.exit(EXIT_FINDINGS)
    sys.exit(EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _project_index(config: Config, rules: list[type[Rule]], found: Discovery, paths: tuple[str, ...]) -> ProjectIndex:
    """What the project's own helpers do, from every Python file under the project root, so
    a run on a few files (as pre-commit makes it) sees the same helpers as a full run."""
    from idemlint.analysis.project import EMPTY, build_index
    from idemlint.files import discover

    if not any(rule.needs_project for rule in rules):
        return EMPTY
    from idemlint.paths import resolved

    whole = any(resolved(Path(p)) == resolved(config.root) for p in paths)
    everything = discover([str(config.root)], config) if config.root.is_dir() and not whole else found
    return build_index(path for path, _shown in [*everything.files, *found.files])


def _anchored(findings: list[Finding], found: Discovery) -> list[Finding]:
    """The findings with paths relative to the project root (baselines, SARIF, annotations)."""
    from dataclasses import replace

    return [replace(f, path=found.anchors.get(f.path, f.path)) for f in findings]


def _patterns(value: str | None) -> tuple[str, ...] | None:
    return None if value is None else tuple(p.strip() for p in value.split(",") if p.strip())


def _per_file_ignores(values: tuple[str, ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    from idemlint.registry import validate_codes

    out = []
    for value in values:
        pattern, _, codes = value.rpartition(":")
        parsed = _codes(codes) or ()
        if not pattern or not parsed:
            _usage_error(f"--per-file-ignores {value!r}: expected PATTERN:CODES, e.g. 'legacy/*:IDM0'")
        bad = validate_codes(parsed)
        if bad:
            _usage_error(f"--per-file-ignores: unknown rule code or prefix {', '.join(bad)}")
        out.append((pattern, parsed))
    return tuple(out)


def _sources(files: list[tuple[Path, str]], findings: list[Finding]) -> dict[str, list[str]]:
    """The lines of the files that have findings, for `--show-source`."""
    from idemlint.parsing import decode
    from idemlint.suppression import split_lines

    real = dict((shown, path) for path, shown in files)
    out: dict[str, list[str]] = {}
    for shown in {f.path for f in findings}:
        try:
            out[shown] = split_lines(decode(real[shown].read_bytes()))
        except (KeyError, OSError, SyntaxError, UnicodeDecodeError, LookupError):
            continue
    return out


def _fixable_summary(findings: list[Finding], unsafe: bool) -> str:
    safe = sum(1 for f in findings if f.fix is not None and f.fix.safe)
    more = sum(1 for f in findings if f.fix is not None and not f.fix.safe)
    if not safe and not more:
        return ""
    text = f"[*] {safe} fixable with `--fix`"
    if more and not unsafe:
        text += f" ({more} more with `--fix --unsafe-fixes`)"
    return text + ".\n"


def _fixes_applied(before: list[Finding], after: list[Finding]) -> str:
    """`--show-fixes`: the fixable findings of before that are gone after fixing."""
    left = {(f.path, f.code, f.fingerprint) for f in after}
    lines = [
        f"fixed {f.path}:{f.line}: {f.code} {f.fix.description}"
        for f in before
        if f.fix is not None and (f.path, f.code, f.fingerprint) not in left
    ]
    return "".join(line + "\n" for line in lines)


def _apply_baseline(
    path: Path, findings: list[Finding], found: Discovery, rules: list[type[Rule]], update: bool, quiet: bool
) -> tuple[list[Finding], int]:
    """The findings the baseline does not hold, and its stale entries, judged only for the files
    this run checked and the rules it ran (with `update`, those stale entries are dropped)."""
    from idemlint.baseline import BaselineError, apply_baseline, drop_stale, in_scope, load_baseline

    try:
        entries = in_scope(load_baseline(path), set(found.anchors.values()), {rule.code for rule in rules})
        anchored = _anchored(findings, found)
        new, stale = apply_baseline(anchored, entries)
        kept = {(f.path, f.line, f.col, f.code) for f in new}
        hidden = len(findings) - len(new)
        if update and stale:
            matched = Counter(
                (f.path, f.code, f.fingerprint) for f in anchored if (f.path, f.line, f.col, f.code) not in kept
            )
            dropped = drop_stale(path, entries - matched)
            click.echo(f"idemlint: dropped {dropped} stale entr{'ies' if dropped != 1 else 'y'} from {path}", err=True)
            stale = 0
    except (BaselineError, OSError, ValueError, KeyError) as error:
        _usage_error(str(error) if isinstance(error, BaselineError) else f"{path}: cannot update: {error}")
    if not quiet and (hidden or stale):
        click.echo(
            f"idemlint: {hidden} finding{'s' * (hidden != 1)} hidden by the baseline, "
            f"{stale} stale entr{'ies' if stale != 1 else 'y'}"
            + (" (`--update-baseline` drops them)" if stale else ""),
            err=True,
        )
    return [f for f in findings if (found.anchors.get(f.path, f.path), f.line, f.col, f.code) in kept], stale


def _add_noqa(files: list[tuple[Path, str]], findings: list[Finding]) -> NoReturn:
    """`--add-noqa`: a `# noqa: CODE` on each reported line, files rewritten in place."""
    from idemlint.fixes import encode_like
    from idemlint.parsing import decode
    from idemlint.suppression import add_noqa

    real = dict((shown, path) for path, shown in files)
    by_file: dict[str, dict[int, set[str]]] = {}
    for f in findings:
        if f.code not in ("IDM800", "IDM900"):
            by_file.setdefault(f.path, {}).setdefault(f.line, set()).add(f.code)
    total, errors = 0, []
    for shown, lines in sorted(by_file.items()):
        path = real[shown]
        try:
            raw = path.read_bytes()
            text, changed = add_noqa(decode(raw), lines)
            if changed:
                path.write_bytes(encode_like(raw, text))
        except OSError as error:
            errors.append(f"{shown}: cannot rewrite: {(error.strerror or str(error)).lower()}")
            continue
        total += changed
    click.echo(f"idemlint: added noqa comments to {total} line{'s' * (total != 1)}", err=True)
    for message in errors:
        click.echo(f"idemlint: {message}", err=True)
    sys.exit(EXIT_ERROR if errors else EXIT_CLEAN)


def _progress_bar(clock: Callable[[], float] | None = None) -> Callable[[int, int], None]:
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
        click.echo(f"\rchecked {done}/{total} files ({now - started:.0f} s)", nl=False, err=True)

    return show


def _usage_error(message: str) -> NoReturn:
    click.echo(f"idemlint: {message}", err=True)
    sys.exit(EXIT_ERROR)


def _load_config(paths: tuple[str, ...], config_file: str | None, isolated: bool = False) -> Config:
    """The configuration in force, anchored to the project root (see idemlint.paths)."""
    from idemlint.config import ConfigError, find_pyproject, load_config
    from idemlint.paths import project_root

    try:
        pyproject = None if isolated else Path(config_file) if config_file else find_pyproject(Path(paths[0]))
        config = load_config(pyproject)
    except ConfigError as error:
        _usage_error(str(error))
    return config.with_overrides(root=project_root(paths, pyproject), source=str(pyproject) if pyproject else "")


def _check_stdin(
    shown: str,
    config: Config,
    rules: list[type[Rule]],
    output_format: str,
    output_file: str | None,
    apply_fixes: bool,
    unsafe_fixes: bool,
    exit_zero: bool,
    confident: Callable[[Finding], bool],
) -> NoReturn:
    """`idemlint check - --stdin-filename app/pay.py`: the buffer, judged as that file would be
    (the configuration and selection in force, per-file-ignores, test status); with --fix, the
    fixed text on stdout."""
    from idemlint.engine import check_source
    from idemlint.fixes import fix_source
    from idemlint.output import get_formatter
    from idemlint.parsing import decode
    from idemlint.paths import PathKinds

    kinds = PathKinds(config.root)
    anchor = kinds.relative(Path(shown).absolute()) or shown
    kind = kinds.kind(Path(shown).absolute())
    source = sys.stdin.buffer.read()
    if apply_fixes:
        outcome = fix_source(decode(source), shown, config, rules, unsafe_fixes, kind=kind, anchor=anchor)
        sys.stdout.write(outcome.text)
        if outcome.error:
            click.echo(f"idemlint: {outcome.error}", err=True)
        left = [f for f in outcome.findings if confident(f)]
        sys.exit(EXIT_FINDINGS if left and not exit_zero else EXIT_CLEAN)
    result = check_source(source, shown, config, rules, report_unused_noqa=True, kind=kind, anchor=anchor)
    findings = [f for f in result.findings if confident(f)]
    _emit(get_formatter(output_format)(findings, False), output_file)
    for message in result.errors:
        click.echo(f"idemlint: {message}", err=True)
    sys.exit(EXIT_ERROR if result.errors else EXIT_FINDINGS if findings and not exit_zero else EXIT_CLEAN)


def _print_settings(config: Config, rules: list[type[Rule]]) -> None:
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


def _print_files(found: Discovery, config: Config) -> None:
    """`--show-files`: the files that would be checked, then those skipped and why."""
    checked = found.to_check(config.check_tests)
    for _path, shown in checked:
        click.echo(shown)
    for _path, shown in found.skipped_tests(config.check_tests):
        click.echo(f"{shown}  (skipped: test file; `check-tests = true` to include)")
    for message in found.errors:
        click.echo(f"idemlint: {message}", err=True)


def _writable(output: str) -> None:
    """Create the folder an output file goes to (as ruff does), or stop with one line."""
    try:
        Path(output).parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        _usage_error(f"{output}: cannot create its folder: {error.strerror or error}")
    if Path(output).is_dir():
        _usage_error(f"{output}: is a directory")


def _emit(report: str, output_file: str | None, coloured: bool = False) -> None:
    if not output_file:
        click.echo(report, nl=False, color=coloured or None)
        return
    _writable(output_file)
    try:
        Path(output_file).write_text(report, encoding="utf-8")
    except OSError as error:
        _usage_error(f"{output_file}: cannot write: {(error.strerror or str(error)).lower()}")


def _colour(choice: str) -> bool:
    """--color always|never, else NO_COLOR (https://no-color.org), FORCE_COLOR, and whether stdout is a terminal."""
    import os

    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty()


def _fix(files, findings, config, rules, unsafe, write, found, project):  # type: ignore[no-untyped-def]
    """Fix every file that has a selected fix, judged as the run judged it (kind, root-relative
    path, project index); return the remaining findings, diffs, errors and the count fixed."""
    import difflib

    from idemlint.fixes import encode_like, fix_source, wanted
    from idemlint.parsing import decode

    real_paths = {shown: real for real, shown in files}
    fixable = sorted({f.path for f in findings if wanted(f, unsafe)})  # sorted: files fixed in a stable order
    remaining = [f for f in findings if f.path not in fixable]
    diffs, errors, fixed_files, fixed_count = [], [], 0, 0
    for shown in fixable:
        path = real_paths[shown]
        try:
            raw = path.read_bytes()
        except OSError as error:
            errors.append(f"{shown}: cannot read: {(error.strerror or str(error)).lower()}")
            continue
        text = decode(raw)
        outcome = fix_source(
            text,
            shown,
            config,
            rules,
            unsafe,
            kind=found.kinds.get(shown),
            anchor=found.anchors.get(shown),
            project=project,
        )
        remaining.extend(outcome.findings)
        if outcome.error:
            errors.append(outcome.error)
        if outcome.text == text:
            continue
        fixed_files += 1
        fixed_count += outcome.applied
        if write:
            try:
                path.write_bytes(encode_like(raw, outcome.text))
            except OSError as error:
                errors.append(f"{shown}: cannot write: {(error.strerror or str(error)).lower()}")
                continue
        else:
            diffs.append(
                "".join(
                    difflib.unified_diff(
                        text.splitlines(True), outcome.text.splitlines(True), f"a/{shown}", f"b/{shown}"
                    )
                )
            )
    if write and fixed_count:
        click.echo(
            f"idemlint: fixed {fixed_count} finding{'s' * (fixed_count != 1)} in {fixed_files} file{'s' * (fixed_files != 1)}",
            err=True,
        )
    return sorted(remaining), diffs, errors, fixed_count


@cli.command(short_help="List side-effecting external calls and their retry safety.")
@click.argument("paths", nargs=-1, type=click.Path())
@click.option(
    "--format", "output_format", type=click.Choice(["text", "json", "markdown"]), default="text", show_default=True
)
@click.option("--output", "output_file", type=click.Path(), help="Write the inventory to a file.")
@click.option(
    "--config", "config_file", type=click.Path(dir_okay=False), help="Read [tool.idemlint] from this pyproject.toml."
)
def audit(paths: tuple[str, ...], output_format: str, output_file: str | None, config_file: str | None) -> None:
    """List every side-effecting external call: key sent? retried? what a timeout does."""
    from idemlint.audit import FORMATS, audit_paths, format_text
    from idemlint.files import discover

    paths = paths or (".",)
    config = _load_config(paths, config_file)
    if output_file:
        _writable(output_file)
    found = discover(list(paths), config)
    rows, errors = audit_paths(found.to_check(config.check_tests), config)
    if output_format == "text":
        report = format_text(rows, output_file is None and _colour("auto"))
    else:
        report = FORMATS[output_format](rows)  # type: ignore[operator]
    _emit(report, output_file)
    for message in [*found.errors, *errors]:
        click.echo(f"idemlint: {message}", err=True)
    sys.exit(EXIT_ERROR if found.errors or errors else EXIT_CLEAN)


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
