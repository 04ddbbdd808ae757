"""What functions elsewhere in the project do: an index built before files are checked.

A file alone cannot see into the methods it calls: `job.set_status("failed")` is an
unconditional transition if `Job.set_status` just assigns and saves, and a guarded one if
it first returns when the job is complete. The runner maps every Python file of the project
root to plain facts with the standard library's `ast` (about ten times cheaper than libcst,
and only files that define such methods are parsed), reduces them to one `ProjectIndex`,
and each file is then checked against it. The index is plain, picklable data: it crosses
to worker processes and its digest is part of every cache key, so a change to a helper
re-checks its callers.

Calls are matched by method name only where every definition in the project agrees: a
name defined guarded in one class and unguarded in another stays unknown.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from idemlint.analysis.machines import Machine, Moves, declared_moves, join
from idemlint.knowledge.states import STATE_SETTER, STATE_SETTER_DEFINITION

if TYPE_CHECKING:
    from idemlint.analysis.module_facts import ModuleFacts
    from idemlint.analysis.summaries import Passed, Summary
    from idemlint.config import Config


@dataclass(frozen=True)
class ProjectIndex:
    # state setters whose every definition in the project checks the instance's current
    # state before writing (`if self.complete: return`, `if new not in self.allowed(): raise`)
    guarded_setters: frozenset[str] = frozenset()
    # state setters defined in the project that write without such a check
    unguarded_setters: frozenset[str] = frozenset()
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
        for name, others in renamed_as(self.reexports).items():  # a call to take() runs claim
            for other in others:
                by_name.setdefault(other, []).extend(by_name.get(name, ()))
        return {name: _hash(repr(sorted(texts))) for name, texts in by_name.items()}

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
        pending, seen = [self.defined_as(owner)], set[str]()
        while pending and len(seen) < 20:
            current = pending.pop(0)
            if current in seen:
                continue
            seen.add(current)
            found |= self.task_settings.get(current, frozenset())
            pending.extend(self.defined_as(base) for base in self.classes.get(current, ((), frozenset()))[0])
        return frozenset(found)

    def _class_named(self, receiver: str) -> str | None:
        wanted = receiver.replace("_", "").lower()
        matches = [name for name in self.classes if name.rsplit(".", 1)[-1].lower() == wanted]
        return matches[0] if len(matches) == 1 else None


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


EMPTY = ProjectIndex()


def setter_facts(source: bytes | str) -> dict[str, bool]:
    """{setter method name: guarded?} for the state setters a module defines."""
    raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    if not STATE_SETTER_DEFINITION.search(raw):
        return {}
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    facts: dict[str, bool] = {}
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for method in cls.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and STATE_SETTER.match(method.name):
                if _extends_base(method):
                    continue  # `super().set_status(status)` first: as guarded as the base it extends
                guarded = _checks_own_state_first(method)
                facts[method.name] = facts.get(method.name, guarded) and guarded
    return facts


def _checks_own_state_first(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An `if` on `self.<something>` that returns or raises, before the method writes."""
    for statement in method.body:
        if isinstance(statement, ast.If) and _reads_self(statement.test) and _leaves(statement.body):
            return True
        if _writes_self(statement):
            return False
    return False


def _extends_base(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The method's first statement calls the same method of its base class."""
    first = method.body[1] if len(method.body) > 1 and _is_docstring(method.body[0]) else method.body[0]
    call = first.value if isinstance(first, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == method.name
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "super"
    )


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _reads_self(test: ast.expr) -> bool:
    return any(
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
        for node in ast.walk(test)
    )


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _writes_self(statement: ast.stmt) -> bool:
    for node in ast.walk(statement):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" for t in targets
            ):
                return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
            and node.func.attr.startswith("save")
        ):
            return True
    return False


@dataclass(frozen=True)
class FileFacts:
    """What the index keeps of one file (map), so one file can be re-read and the index
    reduced again (the language server does, on every save)."""

    setters: Mapping[str, bool] = field(default_factory=dict)
    summaries: ModuleFacts | None = None
    reexports: Mapping[str, str] = field(default_factory=dict)  # of a package's `__init__.py`
    machines: Moves = field(default_factory=dict)  # the state machines it declares (production code)


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
    relative = _relative(path, root) if relative is None else relative
    try:
        summaries = summary_facts(source, relative, config, candidate) if config is not None and summarise else None
        roots = config.src if config is not None else ("src",)
        machines = declared_moves(source, relative) if summarise else {}
        return FileFacts(setter_facts(source), summaries, package_reexports(source, relative, roots), machines)
    except Exception:  # a bug on odd input: the index goes on without this file; its own check reports the error
        return FileFacts()


def package_reexports(source: bytes, path: str, source_roots: tuple[str, ...] = ("src",)) -> dict[str, str]:
    """`from .client import ApiClient` (or `from shop.payments.client import ApiClient as
    Client`) in `shop/payments/__init__.py`: {`shop.payments.ApiClient`: ...}. Other files
    re-export nothing callers import through them."""
    from idemlint.analysis.calls import absolute, module_name

    if not path.endswith("__init__.py") or b"import" not in source:
        return {}
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    package = module_name(path, source_roots)
    found: dict[str, str] = {}
    for statement in tree.body:
        if isinstance(statement, ast.ImportFrom):
            origin = absolute("." * statement.level + (statement.module or ""), package, is_package=True)
            for alias in statement.names:
                name = alias.asname or alias.name
                if alias.name == "*" or not origin or origin == f"{package}.{name}":
                    continue  # `from .client import client`: `pkg.client` still names the submodule
                found[f"{package}.{name}"] = f"{origin}.{alias.name}"
    return found


def reduce_facts(files: Iterable[FileFacts], root: Path | None = None) -> ProjectIndex:
    """Reduce: one index from every file's facts. A setter is guarded only if every
    definition in the project is; calls are followed across modules (`follow_calls`)."""
    guarded: dict[str, bool] = {}
    modules: list[ModuleFacts] = []
    reexports: dict[str, str] = {}
    machines: list[Moves] = []
    for facts in files:
        reexports.update(facts.reexports)
        machines.append(facts.machines)
        for name, is_guarded in facts.setters.items():
            guarded[name] = guarded.get(name, is_guarded) and is_guarded
        if facts.summaries is not None:
            modules.append(facts.summaries)
    index = ProjectIndex(
        frozenset(n for n, g in guarded.items() if g),
        frozenset(n for n, g in guarded.items() if not g),
        root=str(root.resolve()) if root is not None else "",
        reexports={name: origin for name, origin in reexports.items() if name != origin},
        state_machines=join(machines),
    )
    return follow_calls(index, modules) if modules else index


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
# Task class's retries, retry a task or callable handed them, sleep or set their state; a
# function elsewhere inherits facts only from such a file. Each pattern runs only where its
# words occur (one alternation over every file cost seconds on a large project).
_SUMMARY_SIGNS: tuple[tuple[tuple[bytes, ...], re.Pattern[bytes]], ...] = tuple(
    (words, re.compile(pattern, re.MULTILINE))
    for words, pattern in (
        (
            (b"requests", b"httpx", b"aiohttp", b"urllib3", b"boto3", b"stripe", b"braintree", b"dyen", b"square")
            + (b"paypalrestsdk", b"mollie", b"razorpay", b"twilio", b"braze"),
            rb"^[ \t]*(?:from|import)[ \t]+(?:requests|httpx|aiohttp|urllib3|boto3|stripe|braintree|adyen|Adyen|"
            rb"square|squareup|paypalrestsdk|mollie|razorpay|twilio|braze)\b",
        ),
        ((b"uuid", b"token_", b"urandom("), rb"uuid[1-7]?\(|token_(?:hex|urlsafe|bytes)\(|urandom\("),
        (
            (b"tatus", b"tate", b"TATUS", b"TATE"),
            rb"(?i:(?:status|state)(?:\w*\s*=\s*|\([^)\n]*)[\w.]*[\"']?\w*(?:fail|declin|cancel|reject|abort|void))",
        ),
        ((b"update(", b".rowcount", b".execute("), rb"^[ \t]*return[ \t][^\n]*(?:\.a?update\(|\.rowcount|\.execute\()"),
        ((b"autoretry_for",), rb"^[ \t]+autoretry_for[ \t]*="),
        ((b"sleep(",), rb"\bsleep\("),
        ((b"retr", b"Retr"), rb"\w\.retry\(|Retrying\(|retry_call\(|\bdef[ \t]+\w*retr(?:y|ies)\w*\("),
        (
            (b"status", b"state", b"stage", b"phase", b"step"),
            rb"^[ \t]+self\.\w*(?:status|state|stage|phase|step)\w*[ \t]*(?::[^=\n]*)?=[^=]",
        ),
    )
)


def summary_candidate(source: bytes) -> bool:
    """Whether a module is worth summarising (see `_SUMMARY_SIGNS`)."""
    return any(any(w in source for w in words) and pattern.search(source) for words, pattern in _SUMMARY_SIGNS)


def summary_facts(source: bytes, path: str, config: Config, candidate: bool | None = None) -> ModuleFacts | None:
    """One module's function summaries for the index, or None when it has none. `candidate`:
    what `summary_candidate(source)` gives, when the caller asked already."""
    from idemlint.analysis.calls import module_name
    from idemlint.analysis.module_facts import module_facts
    from idemlint.reading import MAX_BYTES

    extra = tuple(re.escape(name.split(".")[0]).encode() for name in config.side_effect_calls) + tuple(
        rb"self\." + re.escape(column).encode() + rb"\s*=" for column in config.state_columns
    )
    if candidate is None:
        candidate = summary_candidate(source)
    if not candidate and not (extra and re.search(b"|".join(extra), source)):
        return None
    from idemlint.parsing import Rejected, complexity_problem, decode_source, within_budget

    # the check's guards: its decoding (PEP 263), its size, nesting and operator limits (libcst
    # crashes or takes minutes past them) and its time budget; the check reports such a file
    text = decode_source(source)
    if isinstance(text, Rejected) or len(source) > MAX_BYTES or complexity_problem(text) is not None:
        return None
    found = within_budget(lambda: module_facts(text, path, module_name(path, config.src), config))
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
    from idemlint.analysis.summaries import MAX_DEPTH, Step, Summary, short_name
    from idemlint.analysis.summary_records import literal_number

    functions: dict[str, tuple[Summary, str, int]] = {}
    classes: dict[str, tuple[tuple[str, ...], frozenset[str]]] = {}
    instances: dict[str, str] = {}
    task_settings: dict[str, frozenset[str]] = {}
    task_retriers: dict[str, int] = {}
    edges: list[tuple[str, int, str, str, int, Passed, bool]] = []
    for facts in modules:
        for name, summary, line in facts.functions:
            functions[name] = (summary, facts.path, line)
        for name, bases, methods in facts.classes:
            classes[name] = (bases, methods)
        instances.update(facts.instances)
        task_settings.update(facts.task_settings)
        task_retriers.update(facts.task_retriers)
        for caller, def_line, target, line, passed, always in facts.edges:
            edges.append((caller, def_line, target, facts.path, line, passed, always))
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
        implementations={base: tuple(names) for base, names in implementations.items()},
    )
    for _round in range(MAX_DEPTH):
        changed = False
        for caller, def_line, target, path, line, passed, always in edges:
            found = index.function(target)
            if found is None or found[0] == caller:
                continue
            qualname, inner, _where, _line = found
            current = functions[caller][0] if caller in functions else Summary()
            step = Step(f"{short_name(qualname)}()", path=path, line=line)
            supplied, forwarded = inner.key_binding(passed)
            updates: dict[str, object] = {}
            if inner.sends_key and current.sends_key is None and not supplied:
                updates["sends_key"] = (step, *inner.sends_key)
                updates["key_params"] = current.key_params | forwarded
            unkeyed, operation = inner.unkeyed_effect_for(passed)
            if unkeyed and current.unkeyed_effect is None:
                updates["unkeyed_effect"] = (step, *unkeyed)
                updates["effect_operation"] = current.effect_operation or operation
            effect = inner.effect_for(passed)
            if effect and current.effect is None:
                updates["effect"] = (step, *effect)
            waits = inner.fixed_wait_for(passed, literal_number(passed)) if always else None
            if waits and current.waits_fixed is None:
                updates["waits_fixed"] = (step, *waits)
            forwarded_verb = inner.verb_binding(passed)[1]
            if forwarded_verb and inner.verb_effect and current.verb_effect is None:
                updates.update(
                    verb_param=forwarded_verb,
                    verb_effect=(step, *inner.verb_effect),
                    verb_operation=inner.verb_operation,
                )
            if inner.records_failure and current.records_failure is None and always:
                updates["records_failure"] = (step, *inner.records_failure)
            if updates:
                functions[caller] = (replace(current, **updates), path, def_line)  # type: ignore[arg-type]
                changed = True
        if not changed:
            break
    names: dict[str, set[str]] = {}
    for name, (summary, _path, _line) in functions.items():
        for fact in (
            "returns_key",
            "sends_key",
            "unkeyed_effect",
            "effect",
            "records_failure",
            "returns_count",
            "verb_effect",
            "waits_fixed",
            "wait_chain",
            "state_chain",
        ):
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


def _call_words(names: set[str], renamed: Mapping[str, set[str]]) -> set[str]:
    """What a module that calls one of these functions shows: `name(`, or `name as ` where it
    imports the function under another name, also under each name a package re-exports it as."""
    spelt = names.union(*(renamed.get(name, ()) for name in names))
    return {word for name in spelt for word in (name + "(", name + " as ")}
