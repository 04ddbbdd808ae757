"""Records every caller hands over fresh: a parameter the project fills only with a row the
caller has just made.

A job's status row is often created by the request that starts the job (`pq =
serializer.save()` in `perform_create`, `status = FeedStatus.objects.create(...)`) and handed to
the work that runs it (`process_upload(pq)`, `mark_done.si(status.pk)`), which writes the row's
state with no test of its own. Only that run writes the row: a duplicate request makes a row of
its own, so the write moves no other run's record back (IDM103). The facts are the callers',
per parameter: a function the project defines (under one name, however many times: every call
of the name must hand it over, and every definition with that parameter is judged by them),
called, queued (`.delay(...)`, `.apply_async(args=...)`, `.si(...)`) or handed with its
arguments to what calls it later (`Thread(target=f, args=(pk,))`, `executor.submit(f, pk)`,
`partial(f.delay, pk)`: knowledge/orms.py) only with such a row, its key, or its key column of
another name (`token=export.token`), in that parameter's place, or with a parameter of a function
that is itself so called, or the row it loads by one (`get(pk=pk)`, `session.get(Model, pk)`,
followed to the end). A row
is made where every binding of its name makes one: `Model.objects.create(...)`,
`serializer.save()` in a function that creates, from a serializer given no instance (elsewhere
it may hold one), a helper of the same file that returns a row it made (`item =
self._create_item(row)`); not `Model(...)` then `save()`, whose key may name a row that exists,
nor a name bound any other way too (a parameter, `first()` then `create()`). A parameter the
function binds again is no longer what it was handed, and a chain's `.s(...)` hands over
nothing (its first argument is the previous task's result). Any other use of the function's
name (a call handing over nothing fresh, the name handed on as a value, imported under another
name or spelt in a string, a use in a file that is not parsed) and none of its parameters is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from typing import TypeVar

from idemlint.analysis.chosen_rows import called_name, own_nodes
from idemlint.analysis.names_used import defined_names, names_used, names_used_otherwise
from idemlint.knowledge.orms import KEY_COLUMN, MAKES_A_ROW, ONE_ROW_LOOKUPS, QUEUES_A_CALL, RUNS_A_FUNCTION_LATER
from idemlint.knowledge.roles import (
    ENTRY_DECORATORS,
    ENTRY_SUFFIX,
    ENTRY_VERBS,
    QUEUE_DECORATORS,
    VIEW_DECORATORS,
    VIEW_REQUEST_PARAMETER,
)

T = TypeVar("T")
# a name handed over, and the column of it handed ("" for the row or its key)
Record = tuple[str, str]
# a call handing something over: (function name, [(slot, where from)]). A slot is a position
# ("0"), a keyword, or "<receiver>" (`row.activate()`); where from is "" for a row the caller
# just made, or "caller:parameter" for the caller's own parameter, handed on
Handed = tuple[str, tuple[tuple[str, str], ...]]
# per file: (those calls; the functions it defines with their parameters and those of them it
# binds again; names used any other way; the names it defines, with repeats)
Signature = tuple[str, tuple[str, ...], tuple[str, ...]]
FreshFacts = tuple[tuple[Handed, ...], tuple[Signature, ...], frozenset[str], tuple[str, ...]]
NO_FRESH: FreshFacts = ((), (), frozenset(), ())

# a file that may make a row or hand one on (queued, or called plainly: any call of a name it
# does not define is one), parsed; the rest give only the names they use
_MAY_MAKE = re.compile(
    rb"\.(?:a?create|a?save|delay|apply_async|si?)\(|\b(?:%s)\(" % "|".join(RUNS_A_FUNCTION_LATER).encode()
)
_RECEIVER = "<receiver>"
_ON_THE_CLASS = "<called on the class>"  # `Model.method(a, b)`: positions count from the first parameter but `cls`


def fresh_facts(source: bytes, tree: ast.Module | None) -> FreshFacts:
    """One file's calls that hand over a row made just before (or a parameter, to follow), and
    every other name it uses. A file that makes no row is read by a regular expression alone."""
    defined = defined_names(source)
    if tree is None and _MAY_MAKE.search(source):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            tree = None
    if tree is None:
        return (), (), names_used(source, defined), defined
    handed: list[Handed] = []
    signatures: list[Signature] = []
    other: set[str] = set()
    counted: set[int] = set()
    functions = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    makers = {f.name for f in functions if _returns_a_new_row(f, frozenset())}
    for function in functions:
        if _called_from_outside(function):
            other.add(function.name)  # a route, a view, a receiver: what it is handed comes from anywhere
        params = tuple(a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs))
        stored = {n.id for n in own_nodes(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        kept = {p for p in params if p not in stored}  # `upload = upload.duplicate_of`: no longer what was handed
        signatures.append((function.name, params, tuple(sorted(set(params) - kept))))
        made = _rows_made(function, makers) - set(params)
        loaded = _rows_loaded(function, kept)
        for call in _calls(function):
            name, slots, callee = _called(call)
            if not name:
                continue
            counted.add(id(callee))
            sources = tuple(
                (slot, origin)
                for slot, (record, attribute) in slots
                if (origin := _origin(function.name, record, attribute, made, kept, loaded)) is not None
            )
            if sources and any(slot == _ON_THE_CLASS for slot, _record in slots):
                sources = ((_ON_THE_CLASS, ""), *sources)  # how the positions count
            if sources:
                handed.append((name, sources))
            else:
                other.add(name)
    other |= names_used_otherwise(tree, counted)  # handed on as a value, at module level, in a string
    return tuple(handed), tuple(signatures), frozenset(other), defined


def _called_from_outside(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A function a framework calls with what a client or the framework brings: a web route or
    view (`@app.post(...)`, `@api_view`, `@action`, a `request` first), a signal receiver, a
    scheduled or periodic job. A task queue's task (`@shared_task`) is handed what the project
    queued."""
    for decorator in function.decorator_list:
        named = decorator.func if isinstance(decorator, ast.Call) else decorator
        last = named.attr if isinstance(named, ast.Attribute) else named.id if isinstance(named, ast.Name) else ""
        if last in QUEUE_DECORATORS:
            continue
        if last in ENTRY_DECORATORS or last in ENTRY_VERBS or last in VIEW_DECORATORS or last.endswith(ENTRY_SUFFIX):
            return True
    params = [a.arg for a in (*function.args.posonlyargs, *function.args.args)]
    return VIEW_REQUEST_PARAMETER in params[:2]


def _origin(
    function: str, record: str, attribute: str, made: set[str], kept: set[str], loaded: dict[str, str]
) -> str | None:
    """Where a handed value comes from: "" for a row made here (or its key), "=token" for a
    made row's key column of another name, "f:p" for what the function's parameter holds (a
    row loaded by it: "f:p@token" where looked up by that column), None for anything else."""
    if record in made:
        return f"={attribute}" if attribute else ""
    if attribute:
        return None
    if record in kept:
        return f"{function}:{record}"
    return loaded.get(record)


def join_fresh_facts(files: Iterable[FreshFacts]) -> frozenset[str]:
    """The parameters (`function:parameter`) the project fills only with a row the caller just
    made (or its key), or with a parameter itself so filled; `function:parameter=token` where
    what fills it is such a row's key column of that name. A name several functions define is
    judged by every call of it, against each definition's parameters."""
    calls: dict[str, list[tuple[tuple[str, str], ...]]] = {}
    used: set[str] = set()
    signatures: dict[str, list[tuple[str, ...]]] = {}
    rebound: set[str] = set()
    definitions: dict[str, int] = {}
    for handed, defined_with, other, defined in files:
        used.update(other)
        for name, sources in handed:
            calls.setdefault(name, []).append(sources)
        for name, params, again in defined_with:
            signatures.setdefault(name, []).append(params)
            rebound.update(f"{name}:{p}" for p in again)
        for name in defined:
            definitions[name] = definitions.get(name, 0) + 1
    wanted: dict[str, list[str]] = {}  # function:parameter -> where each call's value came from
    for name, made in calls.items():
        defined_as = signatures.get(name, [])
        if name in used or not defined_as or definitions.get(name) != len(defined_as):
            continue  # used some other way, or defined where it is not read
        if len(defined_as) > 1 and any(params[:1] != ("self",) for params in defined_as):
            continue  # a method and a function of one name: a call may run either, handed anything
        filled = []
        for params in defined_as:
            per_call = [_by_parameter(params, sources) for sources in made]
            filled.append({p: [call[p] for call in per_call] for p in params if all(p in call for call in per_call)})
        for param in {p for params in defined_as for p in params}:
            if f"{name}:{param}" in rebound or any(
                param in params and param not in by_param for params, by_param in zip(defined_as, filled, strict=True)
            ):
                continue  # some definition has it and some call does not fill it
            wanted[f"{name}:{param}"] = [origin for by_param in filled for origin in by_param.get(param, ())]
    resolved: dict[str, str] = {}
    while True:  # a parameter handed on holds what the one it came from holds
        more: dict[str, str] = {}
        for key, origins in wanted.items():
            if key not in resolved:
                values = {_resolved(origin, resolved) for origin in origins}
                held = values.pop() if len(values) == 1 else None
                if held is not None:
                    more[key] = held
        if not more:
            return frozenset(key if column == "" else f"{key}={column}" for key, column in resolved.items())
        resolved.update(more)


def _resolved(origin: str, resolved: dict[str, str]) -> str | None:
    """What a value of this origin holds: a fresh row or its key (""), a fresh row's key column
    of another name ("token"), or not known (None)."""
    if origin == "" or origin.startswith("="):
        return origin[1:]
    source, _, column = origin.partition("@")
    holds = resolved.get(source)
    if not column or holds is None:
        return holds
    return "" if holds == column else None  # loaded by the column the fresh row's key was handed as


def _by_parameter(params: tuple[str, ...], sources: tuple[tuple[str, str], ...]) -> dict[str, str]:
    """Which parameter each slot of a call fills: positions after `self` for a method (its
    receiver is `self`), or from the first parameter for one called on its class
    (`Plans.start(account, payment)`: after `cls` for a classmethod), keywords by name."""
    on_the_class = any(slot == _ON_THE_CLASS for slot, _origin in sources)
    offset = 1 if params[:1] == ("cls",) or not on_the_class and params[:1] == ("self",) else 0
    filled: dict[str, str] = {}
    for slot, origin in sources:
        if slot == _RECEIVER:
            if offset:
                filled[params[0]] = origin
        elif slot.isdigit():
            index = int(slot) + offset
            if index < len(params):
                filled[params[index]] = origin
        elif slot in params:
            filled[slot] = origin
    return filled


def _returns_a_new_row(function: ast.FunctionDef | ast.AsyncFunctionDef, makers: frozenset[str]) -> bool:
    """Every `return` of the function gives a row it has just made (`return
    Item.objects.create(...)`): a helper of the file that makes rows."""
    returns = [n for n in own_nodes(function) if isinstance(n, ast.Return)]
    made = _rows_made(function, makers)
    return bool(returns) and all(
        r.value is not None
        and (_makes_a_row(r.value, False, makers) or isinstance(r.value, ast.Name) and r.value.id in made)
        for r in returns
    )


def _rows_made(function: ast.FunctionDef | ast.AsyncFunctionDef, makers: frozenset[str] | set[str]) -> set[str]:
    """Names every binding of which in the function makes a row: `Model.objects.create(...)`,
    `serializer.save(...)` in a function that creates (also run through a wrapper:
    `sync_to_async(serializer.save)(...)`), or a call of a helper of the file that returns a
    row it made (`item = self._create_item(...)`). Not `Model(...)` then `save()`: its key may
    name a row that exists."""
    creates = "create" in function.name.lower().split("_")
    holding = frozenset(
        node.targets[0].id
        for node in own_nodes(function)
        if isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Call)
        and bool(node.value.args or any(k.arg == "instance" for k in node.value.keywords))
    )
    return set(_bound_only_by(function, lambda value: _makes_a_row(value, creates, makers, holding) or None))


def _bound_only_by(
    function: ast.FunctionDef | ast.AsyncFunctionDef, judge: Callable[[ast.expr], T | None]
) -> dict[str, T]:
    """Names every binding of which in the function is a plain assignment that `judge` gives one
    same answer for; a name also bound another way (in a loop, unpacked, `as job`) has none."""
    answers: dict[str, T | None] = {}
    judged: set[int] = set()
    for node in own_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            judged.add(id(node.targets[0]))
            answer = judge(node.value)
            answers[name] = answer if answers.get(name, answer) == answer else None
    for node in own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in judged:
            answers[node.id] = None
    return {name: answer for name, answer in answers.items() if answer is not None}


def _makes_a_row(
    value: ast.expr | None, creates: bool, makers: frozenset[str] | set[str], holding: frozenset[str] = frozenset()
) -> bool:
    """`X.objects.create(...)`, a helper of the file that returns a new row, or
    `serializer.save()` in a function that creates, from a serializer given no instance
    (`holding`: the names bound to one that was: `UploadSerializer(existing, data=...)`)."""
    value = value.value if isinstance(value, ast.Await) else value
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    called = called_name(value)
    if called in makers:
        return True
    for maker in (func, *(func.args if isinstance(func, ast.Call) else ())):
        if isinstance(maker, ast.Attribute) and maker.attr in ("create", "acreate"):
            return True
        if isinstance(maker, ast.Attribute) and maker.attr in MAKES_A_ROW:
            holder = maker.value.id if isinstance(maker.value, ast.Name) else ""
            return creates and holder not in holding  # `serializer.save()`: new only where the function creates
    return False


def _calls(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterable[ast.Call]:
    """The calls in the function's own body, not in functions or lambdas nested in it (a
    lambda runs later, when a name it reads may hold another row: `on_commit(lambda:
    run.delay(row.pk))` in a loop hands every callback the last row)."""
    return (node for node in own_nodes(function) if isinstance(node, ast.Call))


def _called(call: ast.Call) -> tuple[str, list[tuple[str, Record]], ast.expr]:
    """(the function's name, [(slot, the record handed there)], the node that names it):
    `process(pq)`, `pq.process()`, queued as a task (`process.delay(pq.pk)`,
    `process.apply_async(args=(pq.pk,))`, `process.si(pq.pk)`), or handed with its arguments
    to what runs it later (`Thread(target=process, args=(pq.pk,))`, `submit(process, pq)`)."""
    func = call.func
    positional = list(call.args)
    keywords = [(k.arg, k.value) for k in call.keywords if k.arg]
    if isinstance(func, ast.Attribute) and func.attr == "s":
        return "", [], func  # a chain's signature: its first argument is the previous task's result
    later = _run_later(call)
    if later is not None:
        return later
    if (
        isinstance(func, ast.Attribute)
        and func.attr in QUEUES_A_CALL
        and isinstance(func.value, (ast.Name, ast.Attribute))
    ):
        task = func.value
        if func.attr == "apply_async":  # `apply_async((pk,), {"kind": k})`: its arguments as a sequence and a mapping
            given = positional
            positional = list(given[0].elts) if given and isinstance(given[0], (ast.Tuple, ast.List)) else []
            keywords = _mapping(given[1]) if len(given) > 1 and isinstance(given[1], ast.Dict) else []
        for keyword in call.keywords if func.attr == "apply_async" else ():
            if keyword.arg == "args" and isinstance(keyword.value, (ast.Tuple, ast.List)):
                positional += keyword.value.elts
            elif keyword.arg == "kwargs" and isinstance(keyword.value, ast.Dict):
                keywords += _mapping(keyword.value)
        name = task.id if isinstance(task, ast.Name) else task.attr
        return name, _slots(positional, keywords), task
    slots = _slots(positional, keywords)
    if isinstance(func, ast.Name):
        return func.id, slots, func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id[:1].isupper()
        and positional
    ):
        # `Batch.attach(batch, upload)`: the class's method, given its `self` first (a
        # classmethod's `cls` is the class itself, and a staticmethod has none)
        return func.attr, [(_ON_THE_CLASS, ("", "")), *slots], func
    if isinstance(func, ast.Attribute):
        return func.attr, [*slots, (_RECEIVER, _record(func.value))], func
    return "", slots, func


def _run_later(call: ast.Call) -> tuple[str, list[tuple[str, Record]], ast.expr] | None:
    """A function handed with its arguments to what calls it later (knowledge/orms.py:
    RUNS_A_FUNCTION_LATER): the function named, and what it will be handed."""
    runner = called_name(call)
    spec = RUNS_A_FUNCTION_LATER.get(runner)
    if spec is None or any(isinstance(a, ast.Starred) for a in call.args):
        return None
    where, start, args_keyword, kwargs_keyword = spec
    if runner == "add_job" and not _runs_once(call):
        return None  # an interval or cron job: the function runs again and again
    if isinstance(where, str):
        target = next((k.value for k in call.keywords if k.arg == where), None)
    else:
        target = call.args[where] if len(call.args) > where else None
    if isinstance(target, ast.Attribute) and target.attr in QUEUES_A_CALL:
        target = target.value  # `partial(mail.delay, row.pk)`: the task, queued later
    if not isinstance(target, (ast.Name, ast.Attribute)):
        return None
    positional = list(call.args[start:]) if start is not None else []
    keywords = [(k.arg, k.value) for k in call.keywords if k.arg] if start is not None else []
    for keyword in call.keywords:
        if args_keyword and keyword.arg == args_keyword and isinstance(keyword.value, (ast.Tuple, ast.List)):
            positional += keyword.value.elts
        elif kwargs_keyword and keyword.arg == kwargs_keyword and isinstance(keyword.value, ast.Dict):
            keywords += _mapping(keyword.value)
    name = target.id if isinstance(target, ast.Name) else target.attr
    return name, _slots(positional, keywords), target


def _runs_once(call: ast.Call) -> bool:
    """APScheduler's `add_job(f, ...)` with no trigger (run now) or a "date" one."""
    trigger = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "trigger"), None)
    return trigger is None or isinstance(trigger, ast.Constant) and trigger.value == "date"


def _mapping(value: ast.Dict) -> list[tuple[str, ast.expr]]:
    return [
        (k.value, v)
        for k, v in zip(value.keys, value.values, strict=True)
        if isinstance(k, ast.Constant) and isinstance(k.value, str)
    ]


def _slots(positional: list[ast.expr], keywords: list[tuple[str, ast.expr]]) -> list[tuple[str, Record]]:
    return [(str(i), _record(a)) for i, a in enumerate(positional)] + [(k, _record(v)) for k, v in keywords]


def _record(argument: ast.expr) -> Record:
    """The name a passed row is known by, and the column of it passed: `pq` or its key
    (`pq.pk`, `pq.id`) as ("pq", ""), a key column of another name (`export.token`) as
    ("export", "token"); any other attribute is not the row."""
    if isinstance(argument, ast.Attribute) and isinstance(argument.value, ast.Name):
        if argument.attr in ("pk", "id"):
            return argument.value.id, ""
        if KEY_COLUMN.search(argument.attr):
            return argument.value.id, argument.attr
        return "", ""
    return (argument.id if isinstance(argument, ast.Name) else ""), ""


def _rows_loaded(function: ast.FunctionDef | ast.AsyncFunctionDef, kept: set[str]) -> dict[str, str]:
    """Names every binding of which loads one row by a parameter's value, with where that value
    comes from: `run = Run.objects.get(pk=run_id)` as "f:run_id", `Export.objects.get(token=token)` as "f:token@token". The row is what the
    parameter held, if it held a fresh row's key."""
    return _bound_only_by(function, lambda value: (found := _loaded_by(value, kept)) and f"{function.name}:{found}")


def _loaded_by(value: ast.expr, kept: set[str]) -> str | None:
    """The parameter a one-row lookup is keyed by ("run_id", or "token@token" for a lookup by
    a column other than the key): an ORM's `get(pk=p)`, `get_object_or_404(Model, pk=p)`,
    `session.get(Model, p)`; not a helper named for one (`get_run_by_id(db, p)`), which may
    give a row of another table."""
    if isinstance(value, ast.Await):
        value = value.value
    if not isinstance(value, ast.Call):
        return None
    called = called_name(value)
    if called in ONE_ROW_LOOKUPS:
        for keyword in value.keywords:
            if keyword.arg and isinstance(keyword.value, ast.Name) and keyword.value.id in kept:
                column = keyword.arg
                return keyword.value.id if column in ("pk", "id") else f"{keyword.value.id}@{column}"
        second = value.args[1] if len(value.args) == 2 and not value.keywords else None
        return second.id if called == "get" and isinstance(second, ast.Name) and second.id in kept else None
    return None
