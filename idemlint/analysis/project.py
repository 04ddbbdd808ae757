"""Building the project index (`analysis/project_index.py`): map every file, reduce to one.

The runner maps every Python file of the project root to plain facts (`file_facts`: its
state setters, read with `ast`; the summaries of its functions, for the modules worth a
libcst parse; a package's re-exports; the state machines it declares), then reduces them
to one `ProjectIndex` and follows the calls between modules (`follow_calls`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from idemlint.analysis.caller_guards import NO_CALLS, CallFacts, call_facts, join_call_facts, join_locked_returns
from idemlint.analysis.final_states import Evidence, evidence_of, join_evidence, parse_state_tests
from idemlint.analysis.fresh_records import NO_FRESH, FreshFacts, fresh_facts, join_fresh_facts
from idemlint.analysis.machines import Moves, declared_moves, join
from idemlint.analysis.managers import (
    ManagerColumns,
    ModelManagers,
    RelatedNames,
    join_manager_filters,
    join_related_names,
    model_facts,
)
from idemlint.analysis.module_names import module_aliases, nested_package_names, package_reexports
from idemlint.analysis.project_index import ProjectIndex, renamed_as, spelled_name
from idemlint.analysis.quiet_functions import QuietFacts, join_quiet, quiet_facts
from idemlint.analysis.schedules import NO_SCHEDULE_FACTS, ScheduleFacts, periodic_only, schedule_facts
from idemlint.analysis.setter_facts import by_verdict, setter_facts, weaker
from idemlint.analysis.unique_keys import join_unique_keys, versioned_models
from idemlint.analysis.unreached import NO_UNREACHED, UnreachedFacts, join_unreached, unreached_facts
from idemlint.analysis.unsent_keys import NO_HEADER_FACTS, HeaderFacts, header_facts
from idemlint.knowledge.repeats import names_a_lookup, words_of
from idemlint.knowledge.retries import RETRY_DECORATORS
from idemlint.knowledge.sdks import REMOTE_PACKAGES
from idemlint.knowledge.states import FAILED_STATE_WORDS, STATE_COLUMNS
from idemlint.knowledge.vocabulary import DEFAULT

if TYPE_CHECKING:
    from idemlint.analysis.module_facts import Edge, ModuleFacts
    from idemlint.analysis.summaries import Summary
    from idemlint.config import Config


@dataclass(frozen=True)
class FileFacts:
    """What the index keeps of one file (map), so one file can be re-read and the index
    reduced again (the language server does, on every save)."""

    setters: Mapping[str, str] = field(
        default_factory=dict
    )  # state setter name -> GUARDED, SKIPS_REPEATS, UNGUARDED, STATELESS
    summaries: ModuleFacts | None = None
    reexports: Mapping[str, str] = field(default_factory=dict)  # of a package's `__init__.py`
    machines: Moves = field(default_factory=dict)  # the state machines it declares (production code)
    unique_keys: Mapping[str, tuple[frozenset[str], ...]] = field(default_factory=dict)  # its models' unique keys
    aliases: Mapping[str, str] = field(default_factory=dict)  # the modules it imports under a name
    state_tests: Evidence = field(default_factory=dict)  # what its guards say of each machine's states
    calls: CallFacts = (
        NO_CALLS  # the calls it makes under a lock or on state-chosen rows, and its other names (production code)
    )
    module: str = ""  # its module name, from its path
    package: bool = False  # an `__init__.py`: its folder is a package
    versioned: Mapping[str, bool] = field(default_factory=dict)  # whether each of its models compares a version
    fresh: FreshFacts = NO_FRESH  # the calls it makes with a row it just made, and its other names (production code)
    managers: tuple[ManagerColumns, ModelManagers] = ({}, {})  # the filtering managers it defines, its models' managers
    headers: HeaderFacts = NO_HEADER_FACTS  # the header names it sets, the key attributes it reads
    quiet: QuietFacts = ()  # its functions, and whether each lets no exception out (production code)
    unreached: UnreachedFacts = NO_UNREACHED  # what it defines that nothing else may call, the names it uses
    schedules: ScheduleFacts = NO_SCHEDULE_FACTS  # the task names it schedules and those it queues
    related: RelatedNames = field(default_factory=dict)  # the reverse managers its foreign keys name
    private_fields: frozenset[str] = frozenset()  # the fields its models declare under a name with `_`


def file_facts(
    source: bytes,
    path: Path,
    root: Path | None = None,
    config: Config | None = None,
    summarise: bool = True,
    relative: str | None = None,
    candidate: bool | None = None,
) -> FileFacts:
    """Map one file. With `config` and `summarise` (production code: tests and migrations are
    never called from it), its functions are summarised too (module names from the path
    relative to `root`, or `relative` when the caller knows it). `candidate`: what
    `summary_candidate(source)` gives, when the caller asked already. Never raises: one file
    cannot stop the whole run."""
    from idemlint.analysis.calls import module_name

    relative = _relative(path, root) if relative is None else relative
    try:
        summaries = summary_facts(source, relative, config, candidate) if config is not None and summarise else None
        roots = config.src if config is not None else ("src",)
        machines = declared_moves(source, relative) if summarise else {}
        tree = parse_state_tests(source, relative) if summarise else None
        unique_keys, versioned, managers, related, private = model_facts(
            source, module_name(relative, roots), relative.endswith("__init__.py")
        )
        return FileFacts(
            setter_facts(source, config.vocabulary if config is not None else DEFAULT),
            summaries,
            package_reexports(source, relative, roots),
            machines,
            unique_keys,
            module_aliases(source, relative, roots),
            evidence_of(source, tree) if summarise else {},
            call_facts(source, tree) if summarise else NO_CALLS,
            module_name(relative, roots),
            relative.endswith("__init__.py"),
            versioned,
            fresh_facts(source, tree) if summarise else NO_FRESH,
            managers,
            header_facts(source) if summarise else NO_HEADER_FACTS,
            quiet_facts(source, module_name(relative, roots), tree) if summarise else (),
            unreached_facts(source, module_name(relative, roots), summarise, relative.endswith("__init__.py")),
            schedule_facts(source),
            related,
            private,
        )
    except Exception:  # a bug on odd input: the index goes on without this file; its own check reports the error
        return FileFacts()


def reduce_facts(files: Iterable[FileFacts], root: Path | None = None) -> ProjectIndex:
    """Reduce: one index from every file's facts. A setter is guarded only if every
    definition in the project is (or writes no state), stateless only if every one writes none; calls are followed across modules (`follow_calls`)."""
    setters: dict[str, str] = {}
    modules: list[ModuleFacts] = []
    reexports: dict[str, str] = {}
    machines: list[Moves] = []
    unique_keys: list[Mapping[str, tuple[frozenset[str], ...]]] = []
    aliases: dict[str, str] = {}
    files = list(files)
    for facts in files:
        reexports.update(facts.reexports)
        aliases.update(facts.aliases)
        machines.append(facts.machines)
        unique_keys.append(facts.unique_keys)
        for name, verdict in facts.setters.items():
            setters[name] = weaker(setters.get(name, verdict), verdict)
        if facts.summaries is not None:
            modules.append(facts.summaries)
    keys = join_unique_keys(unique_keys)
    unreached, judged_reachability = join_unreached(f.unreached for f in files)
    index = ProjectIndex(
        *by_verdict(setters),
        root=str(root.resolve()) if root is not None else "",
        reexports={
            **nested_package_names({f.module: f.package for f in files if f.module}),
            **{name: origin for name, origin in reexports.items() if name != origin},
        },
        state_machines=join(machines),
        final_states=join_evidence(f.state_tests for f in files),
        decided_by_callers=join_call_facts(f.calls for f in files),
        locked_by_callers=join_call_facts((f.calls for f in files), locked=True),
        locked_row_returners=join_locked_returns(f.calls for f in files),
        fresh_from_callers=join_fresh_facts((f.fresh for f in files), keys),
        unique_keys=keys,
        versioned_models=versioned_models(f.versioned for f in files),
        manager_filters=join_manager_filters((f.managers[0] for f in files), (f.managers[1] for f in files)),
        related_managers=join_related_names(f.related for f in files),
        private_columns=frozenset().union(*(f.private_fields for f in files)),
        module_aliases=aliases,
        named_header_attributes=frozenset().union(*(f.headers.named for f in files)),
        key_reads=_modules_by_key(files),
        quiet_functions=join_quiet(f.quiet for f in files),
        unreached=unreached,
        judged_reachability=judged_reachability,
        periodic_only_tasks=periodic_only(f.schedules for f in files),
    )
    return follow_calls(index, modules) if modules else index


def _modules_by_key(files: list[FileFacts]) -> dict[str, frozenset[str]]:
    found: dict[str, set[str]] = {}
    for facts in files:
        for key in facts.headers.keys_read:
            found.setdefault(key, set()).add(facts.module)
    return {key: frozenset(modules) for key, modules in found.items()}


# `file_facts` arguments: (source, path, root, config, summarise, relative, candidate)
MapItem = tuple[bytes, Path, "Path | None", "Config | None", bool, "str | None", "bool | None"]
# Maps `file_facts` over such tuples, in order. It is handed them as they are found, so a
# mapper that spreads them over worker processes has them parsing while the rest are mapped.
Mapper = Callable[[Iterable[MapItem]], list[FileFacts]]


def build_index(
    files: Iterable[Path],
    root: Path | None = None,
    config: Config | None = None,
    summarise: Callable[[Path], bool] = lambda path: True,
    mapper: Mapper | None = None,
    read: Callable[[Path], bytes] | None = None,
) -> ProjectIndex:
    """Map every file to its facts, reduce to one index. Unreadable files are skipped (the
    check itself reports them). The modules worth summarising (a libcst parse each) go
    through `mapper` when one is given; the rest are mapped here (a regex, at most `ast`).
    `read` reads a file (the index cache records what it read, so no file is read twice)."""
    from idemlint.paths import Resolver
    from idemlint.reading import read_source

    read = read or read_source
    facts: list[FileFacts] = []
    resolver = Resolver()  # each folder resolved once, not each file
    base = resolver.resolved_text(root) if root is not None else ""
    prefix = base if base.endswith(os.sep) else base + os.sep

    def relative(path: Path) -> str:
        real = resolver.resolved_text(path)
        if root is not None and real.startswith(prefix):
            return real[len(prefix) :].replace(os.sep, "/")
        return _relative(path, root)

    def heavy() -> Iterator[MapItem]:
        """The modules for the mapper, each yielded once read; the rest mapped meanwhile."""
        for path in files:
            try:
                source = read(path)
            except OSError:
                continue
            wanted = config is not None and summarise(path)
            candidate = summary_candidate(source) if wanted else None
            if mapper is not None and candidate:
                yield (source, path, root, config, wanted, relative(path), candidate)
            else:
                facts.append(file_facts(source, path, root, config, wanted, relative(path), candidate))

    mapped = mapper(heavy()) if mapper is not None else list(heavy())
    return reduce_facts([*facts, *mapped], root)


def file_facts_of(item: MapItem) -> FileFacts:
    """`file_facts` of one mapped tuple (picklable: a worker process can run it)."""
    return file_facts(*item)


# Files worth summarising: they call another system (an HTTP or SDK library is imported),
# make random values, set a failed state, return an update's row count, declare a Celery
# Task class's retries, retry a task or callable handed them, sleep, or set a state (their
# own or a given instance's); a function elsewhere inherits facts only from such a file. Each pattern runs only where its
# words occur (one alternation over every file cost seconds on a large project).
_SUMMARY_SIGNS: tuple[tuple[tuple[bytes, ...], re.Pattern[bytes]], ...] = tuple(
    (words, re.compile(pattern, re.MULTILINE))
    for words, pattern in (
        (
            tuple(name.encode() for name in REMOTE_PACKAGES),
            rb"^[ \t]*(?:from|import)[ \t]+(?:" + "|".join(REMOTE_PACKAGES).encode() + rb")\b",
        ),
        ((b"uuid", b"token_", b"urandom("), rb"uuid[1-7]?\(|token_(?:hex|urlsafe|bytes)\(|urandom\("),
        (
            (b"tatus", b"tate", b"TATUS", b"TATE"),
            rb"(?i:(?:status|state)(?:\w*\s*=\s*|\([^)\n]*)[\w.]*[\"']?\w*(?:"
            + "|".join(FAILED_STATE_WORDS).encode()
            + rb"))",
        ),
        ((b"update(", b".rowcount", b".execute("), rb"^[ \t]*return[ \t][^\n]*(?:\.a?update\(|\.rowcount|\.execute\()"),
        # a conditional update whose count a helper may drop (`drops_count`): `.filter(...).update(`,
        # `UPDATE t SET ... WHERE`, `.where(...).values(`
        (
            (b"update(", b"UPDATE", b"update", b".values("),
            rb"\.filter(?:_by)?\([^\n]*\)[ \t]*\.a?update\(|(?i:\bupdate[ \t]+\w+[ \t]+set\b[^\n]*\bwhere\b)"
            rb"|\.where\([^\n]*\)[ \t]*\.values\(|^[ \t]*\)[ \t]*\.a?update\(",
        ),
        ((b"autoretry_for",), rb"^[ \t]+autoretry_for[ \t]*="),
        # an HTTP status error raised (`raises_status_error`): `response.raise_for_status()`
        ((b"raise_for_status(",), rb"\.raise_for_status\("),
        # a function handed an error to judge, which may raise (`gives_up`): `def _on_error(exc, ...)`
        ((b"raise",), rb"\bdef[ \t]+\w+\(\s*(?:(?:self|cls),\s*)?(?:e|ex|exc|err|error|exception|exc_info|failure)\b"),
        # a function handed a count that raises past it (`raises_past`): `def _check_attempts(attempt, limit)`
        ((b"raise",), rb"\bdef[ \t]+\w+\([^)\n]*\b(?:attempts?|tries|retries|retry_count|deadline)\b"),
        ((b"sleep(",), rb"\bsleep\("),
        # a retry setting returned as stored, a jitter that defaults to none (a policy class)
        ((b"return self.",), rb"^[ \t]+return[ \t]+self\.\w*(?i:delay|wait|backoff|interval)\w*[ \t]*$"),
        ((b"jitter", b"Jitter"), rb"(?i:jitter)\w*[ \t]*(?::[^=,)\n]*)?=[ \t]*(?:0(?:\.0*)?|None|False)[ \t]*[,)\n]"),
        # a predicate testing for a lost race (`isinstance(exc, WriteConflictError)`)
        ((b"isinstance(",), rb"isinstance\([^)\n]*(?:Conflict|Stale|OptimisticLock|Concurrent|Serializ|Deadlock)"),
        ((b"retr", b"Retr"), rb"\w\.retry\(|Retrying\(|retry_call\(|\bdef[ \t]+\w*retr(?:y|ies)\w*\("),
        # a retry decorator bound to a module-level name for other modules (`api_retry = retry(`)
        (
            tuple(sorted({name.rsplit(".", 1)[-1].encode() for name in RETRY_DECORATORS})),
            rb"^\w+[ \t]*=[ \t]*(?:\w+\.)*(?:"
            + "|".join(sorted({name.rsplit(".", 1)[-1] for name in RETRY_DECORATORS})).encode()
            + rb")\(",
        ),
        # a thread or process class, whose subclasses' `run()` a retry decorator restarts (a supervisor)
        ((b"Thread", b"Process"), rb"^class[ \t]+\w+\([^)\n]*\b(?:Thread|Process)\b"),
        (
            tuple(column.encode() for column in sorted(STATE_COLUMNS)),
            rb"^[ \t]+\w+\.\w*(?:" + "|".join(sorted(STATE_COLUMNS)).encode() + rb")\w*[ \t]*(?::[^=\n]*)?=[^=]",
        ),
        # an insert a caller may make after finding the row absent (`inserts_row`): a model's
        # `objects.create(`, a reverse manager's (`self.executions.create(`), a session's `add(`
        (
            (b"create(", b".add("),
            rb"\.objects\.a?(?:bulk_)?create\(|\b[a-z_]\w*\.[a-z_]\w*\.a?create\(|\b(?:session|db)\.add(?:_all)?\(",
        ),
        # a sum on a column of a bare name, in a module that stores rows (`builds_on`): `self.credits
        # += n`, `a.n = a.n - 1`, then `.save(` or `.commit(`
        ((b".save(", b".commit(", b".asave("), rb"^[ \t]+(\w+)\.(\w+)[ \t]*(?:[+-]=|=[ \t]*\1\.\2[ \t]*[+-])"),
    )
)

# part of the index cache's key: a change to the signs (or to the catalogue they are derived
# from) builds the index again
SIGNS_DIGEST = hashlib.sha256(repr([(w, p.pattern) for w, p in _SUMMARY_SIGNS]).encode()).hexdigest()[:16]


def summary_candidate(source: bytes) -> bool:
    """Whether a module is worth summarising (see `_SUMMARY_SIGNS`)."""
    return any(any(w in source for w in words) and pattern.search(source) for words, pattern in _SUMMARY_SIGNS)


def summary_facts(source: bytes, path: str, config: Config, candidate: bool | None = None) -> ModuleFacts | None:
    """One module's function summaries for the index, or None when it has none. `candidate`:
    what `summary_candidate(source)` gives, when the caller asked already."""
    from idemlint.analysis.module_facts import module_facts

    vocabulary = config.vocabulary
    extra = tuple(re.escape(name.split(".")[0]).encode() for name in vocabulary.side_effect_calls) + tuple(
        rb"(?i:self\." + re.escape(column).encode() + rb"\s*=)"
        for column in sorted(vocabulary.state_columns - STATE_COLUMNS)
    )
    if candidate is None:
        candidate = summary_candidate(source)
    if not candidate and not (extra and re.search(b"|".join(extra), source)):
        return None
    from idemlint.parsing import Rejected, parse_source, within_budget

    def facts() -> ModuleFacts | Rejected | None:
        # the check's own parse (its decoding, size, nesting and operator limits, crash
        # isolation) and its FileContext; the time budget covers the parse too
        ctx = parse_source(source, path, config)
        return ctx if isinstance(ctx, Rejected) else module_facts(ctx)

    found = within_budget(facts)
    return None if isinstance(found, Rejected) else found


def _relative(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def follow_calls(index: ProjectIndex, modules: list[ModuleFacts]) -> ProjectIndex:
    """Reduce: every summarised function, then a few rounds in which a function inherits what
    the functions it calls do (a POST without a key, a key made per call), each round one call
    deeper; recursion and cycles end because a fact, once known, is never replaced."""
    from idemlint.analysis.inheritance import CallSite, inherit
    from idemlint.analysis.summaries import MAX_DEPTH, Chain, Step, Summary, short_name
    from idemlint.analysis.summary_records import CHAIN_FACTS, literal_number

    functions: dict[str, tuple[Summary, str, int]] = {}
    classes: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
    instances: dict[str, str] = {}
    task_settings: dict[str, frozenset[str]] = {}
    task_retriers: dict[str, int] = {}
    retry_decorators: dict[str, str] = {}
    edges: list[tuple[str, Edge]] = []
    for facts in modules:
        for name, summary, line in facts.functions:
            functions[name] = (summary, facts.path, line)
        for name, bases, methods in facts.classes:
            classes[name] = (bases, methods)
        instances.update(facts.instances)
        task_settings.update(facts.task_settings)
        task_retriers.update(facts.task_retriers)
        retry_decorators.update(facts.retry_decorators)
        edges.extend((facts.path, edge) for edge in facts.edges)
    implementations: dict[str, list[str]] = {}
    for name, (bases, _methods) in sorted(classes.items()):
        for base in bases:
            implementations.setdefault(index.defined_as(base), []).append(name)
    index = replace(
        index,
        functions=functions,
        classes=classes,
        instances=instances,
        task_settings=task_settings,
        task_retriers=task_retriers,
        retry_decorators=retry_decorators,
        implementations={base: tuple(names) for base, names in implementations.items()},
    )
    for _round in range(MAX_DEPTH):
        changed = False
        for path, (caller, def_line, target, line, passed, always, returned, sent, retried, leave, absorbed) in edges:
            found = index.function(target)
            if found is None or found[0] == caller:
                continue
            qualname, inner, _where, _line = found
            current = functions[caller][0] if caller in functions else Summary()
            site = CallSite(
                Step(f"{short_name(qualname)}()", path=path, line=line),
                passed,
                always=always,
                returned=returned,
                sent=sent,
                retried=retried,
                fixed=literal_number(passed),
                status_errors_leave=leave,
                duplicates_absorbed=absorbed,
            )
            chains: dict[str, Chain] = {}
            updated = inherit(current, inner, site, chains, names_a_lookup(words_of(caller.rsplit(".", 1)[-1])))
            if chains or updated != current:  # a new chain, or more of a fact it had (the models it inserts)
                functions[caller] = (replace(updated, **chains), path, def_line)  # type: ignore[arg-type]
                changed = True
        if not changed:
            break
    names: dict[str, set[str]] = {}
    for name, (summary, _path, _line) in functions.items():
        for fact in CHAIN_FACTS:
            if getattr(summary, fact):
                names.setdefault(fact, set()).add(spelled_name(name).lower())
    renamed: dict[str, set[str]] = {}
    for name, others in renamed_as(index.reexports).items():
        renamed.setdefault(name.lower(), set()).update(other.lower() for other in others)
    return replace(
        index,
        functions=functions,
        names_with={fact: frozenset(_call_words(found, renamed)) for fact, found in names.items()},
    )


def _call_words(names: set[str], renamed: Mapping[str, set[str]]) -> set[str]:
    """What a module that calls one of these functions shows: `name(`, or `name as ` where it
    imports the function under another name, also under each name a package re-exports it as."""
    spelt = names.union(*(renamed.get(name, ()) for name in names))
    return {word for name in spelt for word in (name + "(", name + " as ")}
