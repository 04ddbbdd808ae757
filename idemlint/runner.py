"""Check many files: a content-hash cache first, then worker processes for the rest.

Results are plain data, so they cross process boundaries and sit in the cache unchanged,
and the output is sorted, so it is the same whatever `--jobs` is. A worker that dies (a
native crash in the parser) breaks the pool; the files it left unfinished are then
re-checked one process each, so only the file that kills a worker is lost, and it is
reported as IDM900 rather than hanging or aborting the run.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import asdict, dataclass, field
from pathlib import Path

from idemlint import __version__
from idemlint.analysis.project import EMPTY, ProjectIndex
from idemlint.config import Config
from idemlint.engine import FileResult, check_source
from idemlint.finding import Edit, Finding, Fix
from idemlint.registry import PARSE_ERROR, RESERVED
from idemlint.rule import Rule

Progress = Callable[[int, int], None]  # (files analysed, files to analyse)

# Below this many files, a pool's start-up costs more than it saves (pre-commit on one file).
MIN_FILES_FOR_POOL = 8


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cached: int = 0


@dataclass(frozen=True)
class _Job:
    source: bytes
    shown: str
    kind: str | None = None  # test, migration or source; None: judged from `shown`
    project: ProjectIndex = EMPTY
    anchor: str | None = None  # the path relative to the project root


def run(
    files: Sequence[tuple[Path, str]],
    config: Config,
    rules: Sequence[type[Rule]],
    jobs: int | None = None,
    cache_dir: Path | None = None,
    kinds: Mapping[str, str] | None = None,
    project: ProjectIndex = EMPTY,
    anchors: Mapping[str, str] | None = None,
    progress: Progress | None = None,
) -> RunResult:
    result = RunResult()
    cache = _Cache(cache_dir, config, rules, project) if cache_dir is not None else None
    pending: list[tuple[_Job, str | None]] = []
    for real, shown in files:
        try:
            source = real.read_bytes()
        except OSError as error:
            result.errors.append(f"{shown}: cannot read: {error.strerror or error}")
            continue
        kind = kinds.get(shown) if kinds is not None else None
        anchor = anchors.get(shown) if anchors is not None else None
        key = cache.key(source, f"{shown}\0{kind}\0{anchor}") if cache else None
        hit = cache.get(key) if cache and key else None
        if hit is not None:
            result.findings.extend(hit)
            result.cached += 1
            continue
        pending.append((_Job(source, shown, kind, project, anchor), key))

    jobs = jobs or os.cpu_count() or 1
    pending.sort(key=lambda item: -len(item[0].source))  # largest first: no long tail
    outcomes = _check_all([job for job, _ in pending], config, rules, jobs, progress)
    for (_job, key), outcome in zip(pending, outcomes, strict=True):
        result.findings.extend(outcome.findings)
        result.errors.extend(outcome.errors)
        if cache and key and not outcome.errors:
            cache.put(key, outcome.findings)
    result.findings.sort()
    return result


def _check_one(job: _Job, config: Config, rules: Sequence[type[Rule]]) -> FileResult:
    try:
        return check_source(
            job.source,
            job.shown,
            config,
            rules,
            report_unused_noqa=True,
            kind=job.kind,
            project=job.project,
            anchor=job.anchor,
        )
    except Exception as error:  # a bug outside the per-rule guard: this file's error, not the run's
        import traceback

        where = traceback.extract_tb(error.__traceback__)[-1]
        message = f"{job.shown}: internal error: {type(error).__name__}: {error} [{where.filename}:{where.lineno}]"
        return FileResult(job.shown, (), (message,))


def _check_all(
    jobs_list: list[_Job],
    config: Config,
    rules: Sequence[type[Rule]],
    jobs: int,
    progress: Progress | None = None,
) -> list[FileResult]:
    tick = progress or (lambda done, total: None)
    if jobs <= 1 or len(jobs_list) < MIN_FILES_FOR_POOL:
        serial = []
        for job in jobs_list:
            serial.append(_check_one(job, config, rules))
            tick(len(serial), len(jobs_list))
        return serial
    results: list[FileResult | None] = [None] * len(jobs_list)
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=_fork_context()) as pool:
            futures = [pool.submit(_check_one, job, config, rules) for job in jobs_list]
            for index, future in enumerate(futures):
                try:
                    results[index] = future.result()
                    tick(index + 1, len(jobs_list))
                except BrokenProcessPool:
                    break
    except BrokenProcessPool:
        pass
    for index, job in enumerate(jobs_list):
        if results[index] is None:
            results[index] = _check_isolated(job, config, rules)
    return [r for r in results if r is not None]


def _check_isolated(job: _Job, config: Config, rules: Sequence[type[Rule]]) -> FileResult:
    """Re-check one file in its own process; if that process dies too, the file is the cause."""
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=_fork_context()) as pool:
            return pool.submit(_check_one, job, config, rules).result()
    except BrokenProcessPool:
        name, _ = RESERVED[PARSE_ERROR]
        finding = Finding(
            path=job.shown,
            line=1,
            col=1,
            code=PARSE_ERROR,
            end_line=1,
            end_col=1,
            name=name,
            message="the analyser crashed on this file (the worker process died); it was not checked",
            suggestion="Report this file to idemlint; the rest of the run is unaffected.",
        )
        return FileResult(job.shown, (finding,))


def _fork_context():  # type: ignore[no-untyped-def]
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def default_cache_dir(root: Path) -> Path:
    """The cache lives outside the repository, in the user's cache folder, one folder per
    project: an entry committed to a repository can then never hide a finding in CI, and
    running from any folder uses the same cache."""
    base = os.environ.get("IDEMLINT_CACHE_DIR")
    if base:
        home = Path(base)
    else:
        xdg = os.environ.get("XDG_CACHE_HOME")
        home = (Path(xdg) if xdg else Path.home() / ".cache") / "idemlint"
    project = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:16]
    return home / f"{root.name or 'root'}-{project}"


class _Cache:
    """One JSON file per (content, path, version, rules, configuration), written atomically
    so several idemlint processes (pre-commit runs them in parallel) can share it."""

    def __init__(
        self, directory: Path, config: Config, rules: Sequence[type[Rule]], project: ProjectIndex = EMPTY
    ) -> None:
        self.directory = directory / __version__
        # the project index is part of the key: a change to a helper elsewhere re-checks its callers
        self.salt = hashlib.sha256(
            f"{__version__}\0{','.join(r.code for r in rules)}\0{config.fingerprint()}\0{project.digest}".encode()
        ).hexdigest()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            ignore = directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# Created by idemlint: cached results, safe to delete.\n*\n")
        except OSError:
            self.directory = None  # type: ignore[assignment]

    def key(self, source: bytes, shown: str) -> str | None:
        if self.directory is None:
            return None
        return hashlib.sha256(self.salt.encode() + b"\0" + shown.encode() + b"\0" + source).hexdigest()

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> list[Finding] | None:
        try:
            data = json.loads(self._path(key).read_text(encoding="utf-8"))
            return [_finding_from_dict(item) for item in data]
        except (OSError, ValueError, TypeError, KeyError):
            return None  # missing or corrupt: recompute and rewrite

    def put(self, key: str, findings: Sequence[Finding]) -> None:
        path = self._path(key)
        try:
            path.parent.mkdir(exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", dir=path.parent, delete=False, suffix=".tmp", encoding="utf-8"
            ) as handle:
                json.dump([asdict(f) for f in findings], handle)
            os.replace(handle.name, path)
        except OSError:
            pass  # a cache that cannot be written only costs time


def _finding_from_dict(data: dict[str, object]) -> Finding:
    fix = data.get("fix")
    if isinstance(fix, dict):
        data = {**data, "fix": Fix(tuple(Edit(**e) for e in fix["edits"]), fix["safe"], fix["description"])}
    return Finding(**data)  # type: ignore[arg-type]
