"""The project index: what functions elsewhere in the project do, as plain data.

A file alone cannot see into the methods it calls: `job.set_status("failed")` is an
unconditional transition if `Job.set_status` just assigns and saves, and a guarded one if
it first returns when the job is complete. `analysis/project.py` builds one `ProjectIndex`
before files are checked (map every file to facts, reduce them); each file is then checked
against it. The index is plain, picklable data: it crosses to worker processes and its
digest is part of every cache key, so a change to a helper re-checks its callers.

Calls are matched by method name only where every definition in the project agrees: a
name defined guarded in one class and unguarded in another stays unknown.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING

from idemlint.analysis.machines import Machine  # noqa: TC001 (the cache reads the field types at run time)

if TYPE_CHECKING:
    from idemlint.analysis.summaries import Summary


@dataclass(frozen=True)
class ProjectIndex:
    # state setters whose every definition in the project checks the instance's current
    # state before writing (`if self.complete: return`, `if new not in self.allowed(): raise`)
    guarded_setters: frozenset[str] = frozenset()
    # state setters defined in the project that write without such a check
    unguarded_setters: frozenset[str] = frozenset()
    # methods named as state setters whose every definition in the project writes no state
    stateless_setters: frozenset[str] = frozenset()
    # guarded state setters some definition of which returns, as a move made returns, on a move to
    # the state the record holds already (`if new == self.status: return`): a caller cannot tell a repeat
    repeat_skipping_setters: frozenset[str] = frozenset()
    # what each summarised function does (`analysis/summaries.py`), followed across modules:
    # dotted name -> (summary, root-relative path, line of the def)
    functions: Mapping[str, tuple[Summary, str, int]] = field(default_factory=dict)
    # dotted class name -> (bases as dotted names, names of the methods it defines)
    classes: Mapping[str, tuple[tuple[str, ...], frozenset[str]]] = field(default_factory=dict)
    # module-level instances (`psp = PspClient()`): dotted name -> class
    instances: Mapping[str, str] = field(default_factory=dict)
    root: str = ""  # the project root the module names are relative to (not in the digest)
    # Celery Task classes: dotted name -> the retry settings their bodies declare
    task_settings: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # for the pre-filter: the words a call to a summarised function with each fact shows,
    # lower-cased (`name(`, `name as `, and the same for the names packages re-export it under)
    names_with: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # names a package's `__init__.py` re-exports (`from .client import ApiClient`):
    # `shop.payments.ApiClient` -> `shop.payments.client.ApiClient`
    reexports: Mapping[str, str] = field(default_factory=dict)
    # functions that run again what they are handed (a task's `.retry()`, a callable per attempt): name -> position
    task_retriers: Mapping[str, int] = field(default_factory=dict)
    # derived from `classes` (not in the digest): base or interface -> the classes naming it, sorted
    implementations: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # the state machines the project declares (`analysis/machines.py`): enum or `column:` name -> machine
    state_machines: Mapping[str, Machine] = field(default_factory=dict)
    # the final states the project's guards imply (`analysis/final_states.py`): machine -> states
    final_states: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # functions the project calls only under a lock or on rows a state filter chose
    # (`analysis/caller_guards.py`): the precondition of their writes is the callers'
    decided_by_callers: frozenset[str] = frozenset()
    # of them, those called only under a lock: a test there on the record is not stale (IDM101)
    locked_by_callers: frozenset[str] = frozenset()
    # functions every definition of which returns a row it loaded under a row lock
    # (`analysis/locked_rows.py`): a caller's record from one was read under the lock
    locked_row_returners: frozenset[str] = frozenset()
    # functions the project calls only with a row the caller just made (`analysis/fresh_records.py`):
    # only that run writes the row
    fresh_from_callers: frozenset[str] = frozenset()
    # the column sets the project's models keep unique (`analysis/unique_keys.py`): model -> keys
    unique_keys: Mapping[str, tuple[frozenset[str], ...]] = field(default_factory=dict)
    # the models whose ORM writes compare a version column (`analysis/unique_keys.py`)
    versioned_models: frozenset[str] = frozenset()
    # the columns a model's managers filter every query on (`analysis/managers.py`): model -> attribute -> columns
    manager_filters: Mapping[str, Mapping[str, frozenset[str]]] = field(default_factory=dict)
    # the reverse managers foreign keys name (`analysis/managers.related_names`): related name ->
    # (the model it queries, its keys: (column, the model the key points to), sorted)
    related_managers: Mapping[str, tuple[str, tuple[tuple[str, str], ...]]] = field(default_factory=dict)
    # the fields the project's models declare under a name with a leading underscore: any other
    # such attribute (`order._cached_total = ...`) is the object's own, not a column
    private_columns: frozenset[str] = frozenset()
    # modules imported under a name (`import trio as event_loop` in `pkg/compat.py`):
    # `pkg.compat.event_loop` -> `trio`
    module_aliases: Mapping[str, str] = field(default_factory=dict)
    # header-name attributes some file sets to something other than None (`analysis/unsent_keys.py`)
    named_header_attributes: frozenset[str] = frozenset()
    # key attributes (`options.idempotency_key`) and the modules that read each (`analysis/unsent_keys.py`)
    key_reads: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # the functions (`shop.jobs.Runner.run`) every definition of which lets no exception out, the
    # bodies that do (`body:` + name, whatever decorates them) and the classes made without a
    # constructor that may fail (name + `()`) (`analysis/quiet_functions.py`): a retry around
    # calls to them never runs
    quiet_functions: frozenset[str] = frozenset()
    # retry decorators bound to a module-level name (`retry_config.api_retry`) -> the decorator's
    # qualified name (`tenacity.retry`): applying one elsewhere retries the function
    retry_decorators: Mapping[str, str] = field(default_factory=dict)
    # functions, plain classes and their methods nothing in the project names
    # (`analysis/unreached.py`): what is found in them cannot happen today
    unreached: frozenset[str] = frozenset()
    # the short names of every definition judged so, reached or not: a file naming one depends on
    # whether it is (the definer names its own), so the cache keys it under that name
    judged_reachability: frozenset[str] = frozenset()
    # tasks a periodic schedule names and no code queues (`analysis/schedules.py`): one run per tick
    periodic_only_tasks: frozenset[str] = frozenset()

    @property
    def digest(self) -> str:
        """Stable across processes: sets are sorted (their order follows the hash seed)."""
        return _hash(repr((self.structure_digest, sorted(self.function_digests.items()))))

    @property
    def structure_digest(self) -> str:
        """Everything but what the summarised functions do: setters, classes, instances, Celery
        facts, re-exports, and the names of the functions. A change here may change how any
        file's calls resolve, so every file is checked again."""
        classes = sorted((name, bases, sorted(methods)) for name, (bases, methods) in self.classes.items())
        return _hash(
            repr(
                (
                    sorted(self.guarded_setters),
                    sorted(self.unguarded_setters),
                    sorted(self.stateless_setters),
                    sorted(self.repeat_skipping_setters),
                    sorted(self.functions),
                    classes,
                    sorted(self.instances.items()),
                    sorted((name, sorted(settings)) for name, settings in self.task_settings.items()),
                    sorted(self.reexports.items()),
                    sorted(self.task_retriers.items()),
                    [
                        (name, sorted((s, sorted(t)) for s, t in m.moves.items()))
                        for name, m in self.state_machines.items()
                    ],
                    sorted((name, sorted(states)) for name, states in self.final_states.items()),
                    sorted(self.decided_by_callers),
                    sorted(self.locked_by_callers),
                    sorted(self.locked_row_returners),
                    sorted(self.fresh_from_callers),
                    sorted((model, sorted(sorted(k) for k in keys)) for model, keys in self.unique_keys.items()),
                    sorted(self.versioned_models),
                    sorted(
                        (m, sorted((a, sorted(c)) for a, c in by.items())) for m, by in self.manager_filters.items()
                    ),
                    sorted(self.module_aliases.items()),
                    sorted(self.related_managers.items()),
                    sorted(self.private_columns),
                    sorted(self.named_header_attributes),
                    sorted((key, sorted(modules)) for key, modules in self.key_reads.items()),
                    sorted(self.quiet_functions),
                    sorted(self.retry_decorators.items()),
                    sorted(self.periodic_only_tasks),
                )
            )
        )

    @property
    def function_digests(self) -> dict[str, str]:
        """What the summarised functions do, by the name a call spells (`send`, `post`): a file
        depends on the names it holds, so editing a helper re-checks the files that name it."""
        by_name: dict[str, list[str]] = {}
        for name, (summary, path, line) in self.functions.items():
            text = repr((name, repr(replace(summary, key_params=sorted(summary.key_params))), path, line))  # type: ignore[arg-type]
            by_name.setdefault(spelled_name(name), []).append(text)
        unreached: dict[str, list[str]] = {}
        for dotted in sorted(self.unreached):
            unreached.setdefault(dotted.rsplit(".", 1)[-1], []).append(dotted)
        for name in self.judged_reachability:  # a call of it added or removed elsewhere re-checks its definer
            by_name.setdefault(name, []).append(f"unreached {unreached.get(name, [])}")
        for name, others in renamed_as(self.reexports).items():  # a call to take() runs claim
            for other in others:
                by_name.setdefault(other, []).extend(by_name.get(name, ()))
        return {name: _hash(repr(sorted(texts))) for name, texts in by_name.items()}

    def is_sole_final(self, column: str, kind: str, text: str, imports: Mapping[str, str]) -> bool:
        """Whether a written state is the one final state the project's guards imply for its machine."""
        from idemlint.analysis.final_states import is_sole_final

        return is_sole_final(self.final_states, column, kind, text, imports)

    def function_names(self, fact: str) -> frozenset[str]:
        """The names, lower-cased, a call to a summarised function with `fact` may spell: its
        own and those packages re-export it under (the `name(` words of `names_with`)."""
        return frozenset(word[:-1] for word in self.names_with.get(fact, ()) if word.endswith("("))

    def function(self, target: str) -> tuple[str, Summary, str, int] | None:
        """The summarised function a call target names: itself, the method a base class
        defines (the first in depth-first base order, as far as the index knows the classes),
        or, for `~api_client.post`, the method of the one project class named like the
        receiver. A method the class defines itself without a summary hides its bases'."""
        from idemlint.analysis.calls import CONVENTION

        if target.startswith(CONVENTION):
            receiver, _, method = target[len(CONVENTION) :].partition(".")
            owner = self._class_named(receiver)
            if owner is None:
                return None
            target = f"{owner}.{method}"
        if target not in self.functions and target.rpartition(".")[0] not in self.classes:
            target = self.defined_as(target)  # `shop.payments.ApiClient`, re-exported by the package
        found = self.functions.get(target)
        if found is not None:
            return (target, *found)
        owner, _, method = target.rpartition(".")
        if owner in self.instances:
            owner = self.instances[owner]
            target = f"{owner}.{method}"
            found = self.functions.get(target)
            if found is not None:
                return (target, *found)
        seen: set[str] = set()
        pending = [owner]
        while pending and len(seen) < 20:
            current = pending.pop(0)
            if current in seen or current not in self.classes:
                continue
            seen.add(current)
            bases, methods = self.classes[current]
            bases = tuple(self.defined_as(base) for base in bases)
            if current != owner and method in methods:
                found = self.functions.get(f"{current}.{method}")
                return (f"{current}.{method}", *found) if found is not None else None
            if current == owner and method in methods:
                return None
            pending.extend(bases)
        return self._implementation(owner, method) if owner not in self.classes else None

    def _implementation(self, interface: str, method: str) -> tuple[str, Summary, str, int] | None:
        """`helpdesk = request.find_service(IHelpDesk)`, `gateway: BaseGateway`: an interface
        or base class the index does not summarise, so the call runs one of its
        implementations. The first (by name) whose method calls another system is one the
        call may reach. Only "may" facts are kept (an effect; an unkeyed one if any implementation
        makes one), never one a caller must rely on (a key, a failure, a wait, a state write)."""
        from idemlint.analysis.summary_records import Summary

        reached = [
            (f"{name}.{method}", found)
            for name in self.implementations.get(interface, ())
            if (found := self.functions.get(f"{name}.{method}")) is not None and found[0].effect
        ]
        if not reached:
            return None
        qualname, (summary, path, line) = next(((q, f) for q, f in reached if f[0].unkeyed_effect), reached[0])
        may = Summary(
            params=summary.params,
            unkeyed_effect=summary.unkeyed_effect,
            effect=summary.effect,
            effect_operation=summary.effect_operation,
        )
        return (qualname, may, path, line)

    def defined_as(self, dotted: str) -> str:
        """Where a name is defined when it is imported through a package that re-exports it:
        `shop.payments.ApiClient.post` -> `shop.payments.client.ApiClient.post` (a chain of
        re-exports is followed a few packages deep)."""
        for _hop in range(4):
            parts = dotted.split(".")
            for end in range(len(parts), 0, -1):
                origin = self.reexports.get(".".join(parts[:end]))
                if origin is not None:
                    dotted = ".".join([origin, *parts[end:]])
                    break
            else:
                return dotted
        return dotted

    def inherited_settings(self, owner: str) -> frozenset[str]:
        """The Celery retry settings a Task class declares or inherits from its bases (as far
        as the index knows them): what `@app.task(base=owner)` gets from it."""
        found: set[str] = set()
        for current in (self.defined_as(owner), *self.ancestors(owner)):
            found |= self.task_settings.get(current, frozenset())
        return frozenset(found)

    def ancestors(self, owner: str) -> tuple[str, ...]:
        """The bases of a class and theirs, breadth first, as far as the index knows them (a
        base outside the project, `threading.Thread`, is named and not followed)."""
        found: list[str] = []
        pending, seen = [self.defined_as(owner)], set[str]()
        while pending and len(seen) < 20:
            current = pending.pop(0)
            if current in seen:
                continue
            seen.add(current)
            bases = [self.defined_as(base) for base in self.classes.get(current, ((), frozenset()))[0]]
            found.extend(bases)
            pending.extend(bases)
        return tuple(dict.fromkeys(found))

    @cached_property
    def retry_config_classes(self) -> dict[str, frozenset[str]]:
        """The project's subclasses of urllib3's `Retry`, each with the methods it and its
        project bases define (a `def is_retry` decides each retry itself)."""
        from idemlint.knowledge.retries import URLLIB3_RETRY

        found: dict[str, frozenset[str]] = {}
        for name in self.classes:
            chain = self.ancestors(name)
            if URLLIB3_RETRY.intersection(chain):
                found[name] = frozenset().union(*(self.classes.get(c, ((), frozenset()))[1] for c in (name, *chain)))
        return found

    @cached_property
    def thread_classes(self) -> frozenset[str]:
        """The project's classes that are threads or processes through their bases."""
        from idemlint.knowledge.retries import THREAD_CLASSES

        return frozenset(name for name in self.classes if THREAD_CLASSES.intersection(self.ancestors(name)))

    def _class_named(self, receiver: str) -> str | None:
        matches = self._classes_by_short_name.get(receiver.replace("_", "").lower(), ())
        return matches[0] if len(matches) == 1 else None

    @cached_property
    def _classes_by_short_name(self) -> dict[str, tuple[str, ...]]:
        """`retryconfig` -> the project classes named RetryConfig, grouped once per index."""
        found: dict[str, list[str]] = {}
        for name in self.classes:
            found.setdefault(name.rsplit(".", 1)[-1].lower(), []).append(name)
        return {short: tuple(names) for short, names in found.items()}


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


EMPTY = ProjectIndex()


def spelled_name(qualname: str) -> str:
    """The name a call to this function spells: `send` for `shop.mail.send`, the class for its
    constructor (`ApiClient(` runs `shop.client.ApiClient.__init__`)."""
    parts = qualname.rsplit(".", 2)
    return parts[-2] if len(parts) >= 2 and parts[-1] == "__init__" else parts[-1]


def renamed_as(reexports: Mapping[str, str]) -> dict[str, set[str]]:
    """A function's name -> the other names packages re-export it under (`from .claims import
    claim as take`), a re-export of a re-export too."""
    direct: dict[str, set[str]] = {}
    for alias, origin in reexports.items():
        name, other = origin.rsplit(".", 1)[-1], alias.rsplit(".", 1)[-1]
        if other != name:
            direct.setdefault(name, set()).add(other)
    closed: dict[str, set[str]] = {}
    for name in direct:
        seen: set[str] = set()
        pending = [name]
        while pending:
            for other in direct.get(pending.pop(), ()):
                if other not in seen and other != name:
                    seen.add(other)
                    pending.append(other)
        closed[name] = seen
    return closed
