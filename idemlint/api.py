"""idemlint as a library: what the CLI, the language server and the flake8 plugin call.

Each front end used to hold its own copy of these steps (finding the configuration, judging
a file's kind and root-relative path, building the project index, applying fixes); they
live here once, so a file is judged the same way whichever way it reaches idemlint. Nothing
here prints or exits: problems come back as values or as the exceptions named below.

Typical use:

    config = load_config(["src"])                     # ConfigError if the file is invalid
    rules = enabled_rules(config.selected, config.ignored)
    found = discover_files(["src"], config)
    outcome = check_files(found, config, rules, project=build_project_index(config, rules, found))
"""

from __future__ import annotations

import difflib
import hashlib
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, cast

from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.config import Config
from idemlint.finding import Finding

if TYPE_CHECKING:
    from idemlint.analysis.project import FileFacts
    from idemlint.engine import FileResult
    from idemlint.files import Discovery
    from idemlint.fixes import FixOutcome
    from idemlint.paths import PathKinds, Resolver
    from idemlint.rule import Rule
    from idemlint.rule_table import RuleRow
    from idemlint.runner import Progress, RunResult

Files = Sequence[tuple[Path, str]]  # (real path, path as shown)


# -- configuration and files -------------------------------------------------------------------


def load_config(
    paths: Sequence[str],
    config_file: str | None = None,
    isolated: bool = False,
    read: Callable[[Path | None], Config] | None = None,
    resolver: Resolver | None = None,
) -> Config:
    """The configuration in force for `paths`, anchored to the project root (see
    idemlint.paths). `read` loads one configuration file (the server caches it); raises
    ConfigError for an invalid one. `resolver`: one run's path resolutions, shared with its
    discovery (see idemlint.paths.Resolver)."""
    from idemlint.config import find_pyproject
    from idemlint.config import load_config as read_file
    from idemlint.paths import project_root

    pyproject = None if isolated else Path(config_file) if config_file else find_pyproject(Path(paths[0]))
    config = (read or read_file)(pyproject)
    return config.with_overrides(
        root=project_root(paths, pyproject, resolver), source=str(pyproject) if pyproject else ""
    )


def discover_files(
    paths: Sequence[str], config: Config, force_exclude: bool = False, resolver: Resolver | None = None
) -> Discovery:
    """The Python files under `paths`, minus excluded and git-ignored ones, each with its
    kind (test, migration, source) and its path relative to the project root."""
    from idemlint.files import discover

    return discover(list(paths), config, force_exclude, resolver=resolver)


def kind_and_anchor(path: Path, config: Config, kinds: PathKinds | None = None) -> tuple[str, str | None]:
    """A single file's kind and its path relative to the project root (None outside it),
    judged as discovery judges a file it finds. Pass `kinds` to reuse one project's cache."""
    from idemlint.paths import PathKinds

    kinds = kinds or PathKinds(config.root)
    return kinds.kind(path), kinds.relative(path)


def project_files(
    config: Config, found: Discovery | None = None, paths: Sequence[str] = (), cache_dir: Path | None = None
) -> list[str]:
    """Every Python file under the project root, and the files `found` outside it: a run on a
    few files (as pre-commit makes it) sees the same helpers as a full run. With `cache_dir`,
    the root's listing is kept there and reused while no folder in it changed. Paths as text:
    a warm run compares thousands of them and needs no Path."""
    return _project_files(config, found, paths, cache_dir)[0]


def _project_files(
    config: Config, found: Discovery | None, paths: Sequence[str], cache_dir: Path | None
) -> tuple[list[str], list[str]]:
    """`project_files`, and those the root's listing lacks (files outside it or excluded from
    its walk): what tells one run's index from another's."""
    from idemlint.paths import Resolver, resolved

    resolver = found.resolver if found is not None else Resolver()
    # `../jobs/tasks.py` named from a subfolder is the listing's `/root/jobs/tasks.py`
    given = [resolver.resolved_text(n) if ".." in n.split(os.sep) else n for n, _ in found.entries] if found else []
    root = str(resolved(config.root))
    # the paths given include the root: the run's own discovery already walked it all
    walked = set(found.walked) if found is not None else set()
    whole = any(resolver.resolved_text(Path(p)) == root for p in paths if p in walked)
    everything = _root_files(config, cache_dir) if config.root.is_dir() and not whole else []
    # `check . build/one.py`, `check . ../lib`: what the listing lacks (kept apart only with a cache)
    listed = set(_root_files(config, cache_dir) if whole and len(paths) > 1 and cache_dir else everything)
    beyond = [name for name in given if name not in listed] if listed or not whole else []
    return list(dict.fromkeys([*everything, *given])), beyond


def _root_files(config: Config, cache_dir: Path | None) -> list[str]:
    from idemlint.cache import cached_listing
    from idemlint.files import discover, repository_chain

    def walk() -> tuple[list[str], list[str], bool]:
        found = discover([str(config.root)], config, judge=False)
        return [real for real, _shown in found.entries], found.watched, found.plain

    if cache_dir is None:
        return walk()[0]
    # where the repository starts decides which .gitignore files above the root apply
    chain = [str(folder) for folder in repository_chain(config.root)]
    key = repr((str(config.root), config.exclude, config.extend_exclude, chain))
    return cached_listing(cache_dir, key, walk)


def build_project_index(
    config: Config,
    rules: Sequence[type[Rule]],
    found: Discovery | None = None,
    paths: Sequence[str] = (),
    cache: bool = False,
) -> ProjectIndex:
    """What the project's own helpers do (idemlint.analysis.project), only when a rule needs it;
    with `cache`, the index built last time is reused while none of its files changed."""
    from idemlint.analysis.project import build_index
    from idemlint.cache import cached_index
    from idemlint.paths import PathKinds
    from idemlint.runner import default_cache_dir, map_in_workers

    if not any(rule.needs_project for rule in rules):
        return EMPTY
    kinds = PathKinds(config.root, found.resolver if found is not None else None)
    directory = default_cache_dir(config.root) if cache else None

    def build(files: list[str], read: Callable[[Path], bytes]) -> ProjectIndex:
        return build_index(
            [Path(name) for name in files], config.root, config, kinds.is_production, map_in_workers, read
        )

    files, beyond = _project_files(config, found, paths, directory)
    return cached_index(files, directory, _index_key(config, beyond), build)


def map_file(path: Path, config: Config, kinds: PathKinds) -> FileFacts | None:
    """One file's facts for the project index, read and judged as `build_project_index` reads
    and judges them (size-capped, regular files only, summarised only in production code):
    the language server re-maps a saved file with it. None when the file cannot be read."""
    from idemlint.analysis.project import file_facts
    from idemlint.reading import read_source

    try:
        source = read_source(path)
    except OSError:
        return None
    return file_facts(source, path, config.root, config, kinds.is_production(path))


def stored_project_index(path: str) -> tuple[ProjectIndex, bool]:
    """The project index an `idemlint check` of the project holding `path` stored, while none
    of the project's files changed since; else EMPTY (module-local summaries only). For the
    flake8 plugin, which checks one file at a time and cannot afford to build one. The flag
    says an index was stored but is out of date (the plugin says so: findings that follow
    calls into other modules are missing until `idemlint check` runs again)."""
    from idemlint.cache import index_is_stored, stored_index
    from idemlint.config import ConfigError
    from idemlint.runner import default_cache_dir

    try:
        config = load_config([path] if path != "stdin" else ["."], None)
        directory = default_cache_dir(config.root)
        key = _index_key(config)
        found = stored_index(project_files(config, None, (), directory), directory, key)
        return (found, False) if found is not None else (EMPTY, index_is_stored(directory, key))
    except (ConfigError, OSError):
        return EMPTY, False


def _index_key(config: Config, beyond: Sequence[str] = ()) -> str:
    """What the project index depends on besides its files' contents: the configuration, the
    root, the catalogue and the summary signs derived from it, and the files beyond the root's
    listing (runs given other such files keep an index each, not replacing one another's)."""
    from idemlint.analysis.project import SIGNS_DIGEST
    from idemlint.knowledge import catalogue_digest

    held = hashlib.sha256("\0".join(sorted(beyond)).encode()).hexdigest() if beyond else ""
    return f"{config.fingerprint()}\0{config.root.resolve()}\0{catalogue_digest()}\0{SIGNS_DIGEST}\0{held}"


# -- checking ------------------------------------------------------------------------------------


def check_files(
    found: Discovery,
    config: Config,
    rules: Sequence[type[Rule]],
    project: ProjectIndex = EMPTY,
    jobs: int | None = None,
    cache: bool = True,
    progress: Progress | None = None,
) -> RunResult:
    """Check the files discovery keeps (tests only with `check-tests`), through the cache
    and worker processes. Findings show paths as discovery shows them."""
    from idemlint.runner import default_cache_dir, run

    cache_dir = default_cache_dir(config.root) if cache else None
    files = found.to_check(config.check_tests)
    return run(files, config, rules, jobs, cache_dir, found.kinds, project, found.anchors, progress)


def cached_results(
    found: Discovery, config: Config, rows: Sequence[RuleRow], paths: Sequence[str] = ()
) -> RunResult | None:
    """What `check_files` with the cache on would return, when the cache holds every file
    `found` keeps (a warm run); None as soon as one file misses. It imports no rule class
    (`rows` are the selection's rows in idemlint.rule_table) and does not load the project
    index: the results' run-wide key needs only its digest, stored beside it. The key is
    the runner's own, so rows that disagreed with the rule classes could only miss."""

    from idemlint.cache import file_key, stored_index_digest
    from idemlint.runner import RunResult, _open_cache, default_cache_dir

    directory = default_cache_dir(config.root)
    digests: tuple[str, dict[str, str]] = (EMPTY.structure_digest, EMPTY.function_digests)
    if any(row.needs_project for row in rows):
        files, beyond = _project_files(config, found, paths, directory)
        stored = stored_index_digest(files, directory, _index_key(config, beyond))
        if stored is None:
            return None
        digests = stored
    # _open_cache reads the rules' codes, nothing else
    cache = _open_cache(directory, config, cast("Sequence[type[Rule]]", rows), digests)
    result = RunResult()
    for real, shown in found.to_check_text(config.check_tests):
        try:
            hit = cache.lookup(file_key(real, shown, found.kinds.get(shown), found.anchors.get(shown)), real)[0]
        except OSError:
            return None  # the full run reports it
        if hit is None:
            return None
        result.findings.extend(hit)
        result.cached += 1
    result.unparsed = cache.unparsed
    cache.save()
    result.findings.sort()
    return result


def check_text(
    source: bytes | str,
    path: str,
    config: Config,
    rules: Sequence[type[Rule]],
    kind: str | None = None,
    anchor: str | None = None,
    project: ProjectIndex = EMPTY,
    unused_noqa: bool = True,
) -> FileResult:
    """One file's contents (an editor's buffer, standard input). `kind` and `anchor` as
    `kind_and_anchor` gives them; None judges from `path` alone. `unused_noqa` off where
    another tool owns `# noqa` (flake8)."""
    from idemlint.engine import check_source

    return check_source(
        source, path, config, rules, report_unused_noqa=unused_noqa, kind=kind, project=project, anchor=anchor
    )


def visible(min_confidence: str = "", min_stakes: str = "none") -> Callable[[Finding], bool]:
    """Whether a finding is shown: at least this sure (`--min-confidence`, `minConfidence`;
    "" is the default, idemlint.calibration.DEFAULT_FLOOR) and with at least this much at stake
    (`--min-stakes`)."""
    from idemlint.calibration import shown_by_default
    from idemlint.stakes import at_least

    if min_confidence:
        from idemlint.calibration import CONFIDENCE_RANK

        floor = CONFIDENCE_RANK[min_confidence]
        return lambda f: CONFIDENCE_RANK.get(f.confidence, 2) >= floor and at_least(f.stakes, min_stakes)
    return lambda f: shown_by_default(f.code, f.evidence, f.role, f.confidence) and at_least(f.stakes, min_stakes)


def anchored(findings: Iterable[Finding], found: Discovery) -> list[Finding]:
    """The findings with paths relative to the project root (baselines, SARIF, CI annotations)."""
    return [replace(f, path=found.anchors.get(f.path, f.path)) for f in findings]


def source_lines(files: Files, findings: Iterable[Finding]) -> dict[str, list[str]]:
    """The lines of the files that have findings, as Python counts lines (`--show-source`)."""
    from idemlint.parsing import decode
    from idemlint.reading import read_source
    from idemlint.suppression import split_lines

    real = dict((shown, path) for path, shown in files)
    out: dict[str, list[str]] = {}
    for shown in {f.path for f in findings}:
        try:
            out[shown] = split_lines(decode(read_source(real[shown])))
        except (KeyError, OSError, SyntaxError, UnicodeDecodeError, LookupError):
            continue
    return out


# -- fixing --------------------------------------------------------------------------------------


def fix_text(
    text: str,
    path: str,
    config: Config,
    rules: Sequence[type[Rule]],
    unsafe: bool = False,
    kind: str | None = None,
    anchor: str | None = None,
    project: ProjectIndex = EMPTY,
) -> FixOutcome:
    """One text with its selected fixes applied in rounds (idemlint.fixes), and what is left."""
    from idemlint.fixes import fix_source

    return fix_source(text, path, config, rules, unsafe, kind=kind, anchor=anchor, project=project)


@dataclass
class FixReport:
    findings: list[Finding] = field(default_factory=list)  # what is left, fixed files re-checked
    diffs: list[str] = field(default_factory=list)  # unified diffs, when not written
    errors: list[str] = field(default_factory=list)
    files: int = 0  # files changed
    applied: int = 0  # fixes applied


def fix_files(
    findings: Sequence[Finding],
    config: Config,
    rules: Sequence[type[Rule]],
    found: Discovery,
    project: ProjectIndex = EMPTY,
    unsafe: bool = False,
    write: bool = True,
) -> FixReport:
    """Fix every file that has a selected fix, judged as the run judged it (kind, root-relative
    path, project index): rewritten in its own encoding, or, with `write` off, as diffs."""
    from idemlint.fixes import wanted
    from idemlint.parsing import decode
    from idemlint.reading import encode_like, read_source, write_problem

    real_paths = {shown: real for real, shown in found.files}
    fixable = sorted({f.path for f in findings if wanted(f, unsafe)})  # sorted: files fixed in a stable order
    report = FixReport(findings=[f for f in findings if f.path not in fixable])
    for shown in fixable:
        path = real_paths[shown]
        refused = write_problem(path, config.root) if write else None
        if refused is not None:
            report.errors.append(f"{shown}: cannot fix: {refused}")
            continue
        try:
            raw = read_source(path)
        except OSError as error:
            report.errors.append(f"{shown}: cannot read: {(error.strerror or str(error)).lower()}")
            continue
        text = decode(raw)
        kind, anchor = found.kinds.get(shown), found.anchors.get(shown)
        outcome = fix_text(text, shown, config, rules, unsafe, kind=kind, anchor=anchor, project=project)
        report.findings.extend(outcome.findings)
        if outcome.error:
            report.errors.append(outcome.error)
        if outcome.text == text:
            continue
        report.files += 1
        report.applied += outcome.applied
        if not write:
            before, after = text.splitlines(True), outcome.text.splitlines(True)
            report.diffs.append("".join(difflib.unified_diff(before, after, f"a/{shown}", f"b/{shown}")))
            continue
        try:
            path.write_bytes(encode_like(raw, outcome.text))
        except OSError as error:
            report.errors.append(f"{shown}: cannot write: {(error.strerror or str(error)).lower()}")
    report.findings.sort()
    return report


def add_noqa(files: Files, findings: Iterable[Finding], root: Path) -> tuple[int, list[str]]:
    """A `# noqa: CODE` that suppresses each finding, files rewritten in place (IDM800 and
    IDM900 cannot be suppressed). Placed and verified by idemlint.suppression, as the language
    server's action is. Returns the lines changed and one line per file or finding line that
    could not be."""
    from idemlint.suppression import add_noqa_to_files

    return add_noqa_to_files(files, findings, root)


# -- baselines -----------------------------------------------------------------------------------


def write_baseline(path: Path, findings: Iterable[Finding], found: Discovery) -> None:
    """Record the findings, by root-relative path, so later runs report only new ones."""
    from idemlint.baseline import write_baseline as save

    save(path, anchored(findings, found))


@dataclass
class BaselineOutcome:
    findings: list[Finding]  # those the baseline does not hold
    hidden: int  # findings the baseline holds
    stale: int  # entries that matched nothing (0 once dropped)
    dropped: int | None = None  # entries removed from the file, with `update`


def apply_baseline(
    path: Path, findings: Sequence[Finding], found: Discovery, rules: Sequence[type[Rule]], update: bool = False
) -> BaselineOutcome:
    """The findings the baseline does not hold, judged only for the files this run checked and
    the rules it ran (entries for others are neither matched nor stale); with `update`, the
    stale entries are dropped from the file. Raises BaselineError, OSError, ValueError, KeyError."""
    from idemlint.baseline import apply_baseline as match
    from idemlint.baseline import drop_stale, in_scope, load_baseline

    entries = in_scope(load_baseline(path), set(found.anchors.values()), {rule.code for rule in rules})
    located = anchored(findings, found)
    new, stale = match(located, entries)
    kept = {(f.path, f.line, f.col, f.code) for f in new}
    dropped = None
    if update and stale:
        matched = Counter(
            (f.path, f.code, f.fingerprint) for f in located if (f.path, f.line, f.col, f.code) not in kept
        )
        dropped, stale = drop_stale(path, entries - matched), 0
    left = [f for f in findings if (found.anchors.get(f.path, f.path), f.line, f.col, f.code) in kept]
    return BaselineOutcome(left, len(findings) - len(new), stale, dropped)
