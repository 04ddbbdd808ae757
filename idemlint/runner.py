"""Check many files: the project's result cache first, then worker processes for the rest.

Results are plain data, so they cross process boundaries and sit in the cache unchanged,
and the output is sorted, so it is the same whatever `--jobs` is. A worker that dies (a
native crash in the parser) breaks the pool; the files it left unfinished are then
re-checked one process each, so only the file that kills a worker is lost, and it is
reported as IDM900 rather than hanging or aborting the run.

A warm run (every file a cache hit, see idemlint.cache) imports neither the engine nor
the process pool: it stats each file, reads one cache file and returns.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from idemlint import __version__
from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.cache import SHAPE, ResultCache, Stamp, content_hash, depended_on, file_key, stamp
from idemlint.finding import Finding
from idemlint.knowledge import catalogue_digest
from idemlint.reading import read_source

if TYPE_CHECKING:
    from idemlint.config import Config
    from idemlint.engine import FileResult
    from idemlint.rule import Rule

Progress = Callable[[int, int], None]  # (files analysed, files to analyse)

# Below this many files, a pool's start-up costs more than it saves (pre-commit on one file).
MIN_FILES_FOR_POOL = 8


@dataclass
class RunResult:
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    cached: int = 0
    unparsed: int = 0  # files checked without parsing: none of the rules' words is in them


@dataclass(frozen=True)
class _Job:
    source: bytes | None  # None: the worker reads `path` (a file the cache has no entry for)
    shown: str
    kind: str | None = None  # test, migration or source; None: judged from `shown`
    project: ProjectIndex = EMPTY
    anchor: str | None = None  # the path relative to the project root
    worker_project: bool = False  # the index is the worker's (sent once to the pool), not this job's
    path: str = ""  # the file, for a job without its source
    size: int = 0  # bytes: the largest files go first
    cached: bool = False  # the result goes to the cache: the worker also gives what it depends on


@dataclass(frozen=True)
class _Outcome:
    """A worker's result, with what caching it needs when the worker read the file itself:
    the stat taken before the read, the content hash, the index functions it names."""

    result: FileResult
    stamp: Stamp | None = None
    digest: bytes = b""
    depends: tuple[tuple[str, str], ...] = ()


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
    digests = (project.structure_digest, project.function_digests)
    cache = _open_cache(cache_dir, config, rules, digests) if cache_dir is not None else None
    pending: list[tuple[_Job, str, Stamp | None, bytes]] = []
    for real, shown in files:
        kind = kinds.get(shown) if kinds is not None else None
        anchor = anchors.get(shown) if anchors is not None else None
        key, now, digest = "", None, b""
        source: bytes | None = None
        try:
            if cache is not None:
                key = file_key(real, shown, kind, anchor)
                # a file without an entry is read by the worker that checks it, not here
                hit, source, now, digest = cache.lookup(key, real, read_new=False)
                if hit is not None:
                    result.findings.extend(hit)
                    result.cached += 1
                    continue
            size = len(source) if source is not None else now[0] if now is not None else os.stat(real).st_size
        except OSError as error:
            result.errors.append(f"{shown}: cannot read: {error.strerror or error}")
            continue
        job = _Job(source, shown, kind, project, anchor, path=str(real), size=size, cached=cache is not None)
        pending.append((job, key, now, digest))

    jobs = jobs or os.cpu_count() or 1
    pending.sort(key=lambda item: -item[0].size)  # largest first: no long tail
    outcomes = _check_all([item[0] for item in pending], config, rules, jobs, progress) if pending else []
    for (job, key, now, digest), outcome in zip(pending, outcomes, strict=True):
        result.findings.extend(outcome.result.findings)
        result.errors.extend(outcome.result.errors)
        result.unparsed += not outcome.result.parsed
        if cache is not None and not outcome.result.errors:
            if job.source is None:  # read by the worker: its stat and hash
                now, digest = outcome.stamp, outcome.digest
            cache.put(key, now, digest, outcome.result.findings, outcome.depends, outcome.result.parsed)
    if cache is not None:
        result.unparsed += cache.unparsed
        cache.save()
    result.findings.sort()
    return result


def _open_cache(
    directory: Path, config: Config, rules: Sequence[type[Rule]], digests: tuple[str, Mapping[str, str]]
) -> ResultCache:
    """The cache file of this project and run-wide key: version, rules, configuration, and the
    project index's structure; each entry also keys on the index functions its file names, so
    editing a helper elsewhere re-checks the files that call it and nothing else."""
    structure, functions = digests
    salt = hashlib.sha256(
        f"{__version__}\0{','.join(r.code for r in rules)}\0{config.fingerprint()}\0{structure}\0{SHAPE}\0{catalogue_digest()}".encode()
    ).hexdigest()
    return ResultCache(directory, salt, functions)


def check_source(*args: Any, **kwargs: Any) -> FileResult:
    """The engine's `check_source`, imported when a file is really checked (not on a warm run)."""
    from idemlint.engine import check_source as check

    return check(*args, **kwargs)


# The project index of the run, in a worker process: sent once per worker (the pool's
# initializer), not pickled again with each of thousands of files.
_WORKER_PROJECT: list[ProjectIndex] = [EMPTY]


def _receive_project(project: ProjectIndex) -> None:
    _WORKER_PROJECT[0] = project


def _check_one(job: _Job, config: Config, rules: Sequence[type[Rule]]) -> _Outcome:
    """Check one job's file, reading it first when the job holds only its path."""
    project = _WORKER_PROJECT[0] if job.worker_project else job.project
    source, now, digest = job.source, None, b""
    if source is None:
        try:
            now = stamp(os.stat(job.path))  # before the read: a change meanwhile shows next time
            source = read_source(job.path)
        except OSError as error:
            from idemlint.engine import FileResult

            return _Outcome(FileResult(job.shown, (), (f"{job.shown}: cannot read: {error.strerror or error}",)))
        digest = content_hash(source)
    result = _checked(job, source, project, config, rules)
    depends = depended_on(source, _function_digests(project)) if job.cached else ()
    return _Outcome(result, now, digest, depends)


_DIGESTS: dict[int, tuple[ProjectIndex, dict[str, str]]] = {}


def _function_digests(project: ProjectIndex) -> dict[str, str]:
    """`project.function_digests`, computed once per index in this process (it hashes every
    function's summary)."""
    known = _DIGESTS.get(id(project))
    if known is None or known[0] is not project:
        _DIGESTS.clear()
        known = _DIGESTS[id(project)] = (project, project.function_digests)
    return known[1]


def _checked(
    job: _Job, source: bytes, project: ProjectIndex, config: Config, rules: Sequence[type[Rule]]
) -> FileResult:
    try:
        return check_source(
            source,
            job.shown,
            config,
            rules,
            report_unused_noqa=True,
            kind=job.kind,
            project=project,
            anchor=job.anchor,
        )
    except Exception as error:  # a bug outside the per-rule guard: this file's error, not the run's
        import traceback

        from idemlint.engine import FileResult

        where = traceback.extract_tb(error.__traceback__)[-1]
        message = f"{job.shown}: internal error: {type(error).__name__}: {error} [{where.filename}:{where.lineno}]"
        return FileResult(job.shown, (), (message,))


def _check_all(
    jobs_list: list[_Job],
    config: Config,
    rules: Sequence[type[Rule]],
    jobs: int,
    progress: Progress | None = None,
) -> list[_Outcome]:
    tick = progress or (lambda done, total: None)
    if jobs <= 1 or len(jobs_list) < MIN_FILES_FOR_POOL:
        serial = []
        for job in jobs_list:
            serial.append(_check_one(job, config, rules))
            tick(len(serial), len(jobs_list))
        return serial
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    results: list[_Outcome | None] = [None] * len(jobs_list)
    project = jobs_list[0].project  # one run, one index
    light = [replace(job, project=EMPTY, worker_project=True) for job in jobs_list]
    try:
        with ProcessPoolExecutor(
            max_workers=jobs, mp_context=_fork_context(), initializer=_receive_project, initargs=(project,)
        ) as pool:
            futures = [pool.submit(_check_one, job, config, rules) for job in light]
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


def _check_isolated(job: _Job, config: Config, rules: Sequence[type[Rule]]) -> _Outcome:
    """Re-check one file in its own process; if that process dies too, the file is the cause."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from idemlint.engine import FileResult
    from idemlint.registry import PARSE_ERROR, RESERVED

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
        return _Outcome(FileResult(job.shown, (finding,)))


def map_in_workers(items: Iterable[Any]) -> list[Any]:
    """The project map's modules that need a libcst parse, `file_facts` of each, spread over
    one worker per CPU (in order), each sent as soon as `items` yields it; in this process
    when there are few, or no pool can start."""
    from idemlint.analysis.project import file_facts_of

    pending = iter(items)
    jobs = os.cpu_count() or 1
    first = list(itertools.islice(pending, MIN_FILES_FOR_POOL))
    if jobs <= 1 or len(first) < MIN_FILES_FOR_POOL:
        return [file_facts_of(item) for item in itertools.chain(first, pending)]
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    sent = list(first)
    done: list[Any] = []
    try:
        with ProcessPoolExecutor(max_workers=jobs, mp_context=_fork_context()) as pool:
            futures = [pool.submit(file_facts_of, item) for item in first]
            for item in pending:
                sent.append(item)
                futures.append(pool.submit(file_facts_of, item))
            warm_checker()  # this process would only wait for the workers meanwhile
            for future in futures:
                done.append(future.result())
            return done
    except (BrokenProcessPool, OSError):
        # a worker died (a native crash in the parser): what is left is mapped one file per
        # process, so the file that kills its process only loses its own facts (its check
        # reports it, IDM900), never the run
        return [*done, *(_map_isolated(item) for item in [*sent[len(done) :], *pending])]


def _map_isolated(item: Any) -> Any:
    """`file_facts_of(item)` in a process of its own; no facts if that process dies."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    from idemlint.analysis.project import FileFacts, file_facts_of

    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=_fork_context()) as pool:
            return pool.submit(file_facts_of, item).result()
    except (BrokenProcessPool, OSError):
        return FileFacts()


def warm_checker() -> None:
    """Check a small sample here, once: libcst, the engine and the analyses are then loaded in
    this process, and the check's workers, forked from it, start with them (each would spend
    a few tenths of a second on its first file otherwise)."""
    if _WARM[0] or _fork_context().get_start_method() != "fork":
        return
    _WARM[0] = True
    from idemlint.config import Config
    from idemlint.rules import ALL_RULES

    check_source(_SAMPLE, "sample.py", Config(), ALL_RULES)


_WARM = [False]
# Words most rules' pre-filters look for, so that their analyses run (and load) on it.
_SAMPLE = """\
import time, uuid, requests
from tenacity import retry, stop_after_attempt
from shop.models import Order

@retry(stop=stop_after_attempt(3))
def pay(pk):
    order = Order.objects.select_for_update().get(pk=pk)
    if order.status == "pending":
        Order.objects.filter(pk=pk, status="pending").update(status="paid")
        order.save()
    requests.post("https://pay.example", headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=3)
    time.sleep(1)
"""


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
