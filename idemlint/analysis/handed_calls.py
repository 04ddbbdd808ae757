"""What a call hands the function it runs, now or later, slot by slot.

`process(pq)`, `pq.process()`, a task queued with its arguments (`process.delay(pq.pk)`,
`process.apply_async((), {"pk": pq.pk})`, an actor's `process.send(pq.pk)`), or a function
handed with its arguments to what calls it later (`Thread(target=process, args=(pq.pk,))`).
Each slot (a position, a keyword, or the receiver) is paired with the record the value names:
a row's name, or its name and the key column handed in its place. A mapping or sequence of
arguments may be a name the function binds once to a literal (`arguments = {"pk": pq.pk}`,
keys added by `arguments["kind"] = k`), and a name may hold a row's key (`key = str(run.uuid)`).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from idemlint.analysis.chosen_rows import called_name
from idemlint.analysis.syntax import own_nodes, parameter_names
from idemlint.knowledge.orms import ARGUMENTS_KEYWORDS, KEY_COLUMN, QUEUES_A_CALL, RUNS_A_FUNCTION_LATER

T = TypeVar("T")
Function = ast.FunctionDef | ast.AsyncFunctionDef
# a name handed over, and the column of it handed ("" for the row or its key)
Record = tuple[str, str]
Slots = list[tuple[str, Record]]
RECEIVER = "<receiver>"
ON_THE_CLASS = "<called on the class>"  # `Model.method(a, b)`: positions count from the first parameter but `cls`
# an actor's, on a name the function does not bind (`publish.send(pk)`); elsewhere a method (`row.send()`,
# `self.report.send()`)
_SENDS = frozenset({"send", "send_with_options"})
_OPAQUE: ast.expr = ast.Constant(value=None)  # a value the function set where it cannot be read


class Arguments:
    """The literals of a function that hold a call's arguments: a name bound once to a dict
    or a sequence (`arguments = {"pk": pk}`), with what later subscript stores put in it. A name
    used any other way (`same = arguments`, `arguments.update(...)`, handed to a helper that may
    change it, used in a nested function) is not read. `bound`: the names the function binds."""

    def __init__(self, function: Function) -> None:
        literals = bound_only_by(function, lambda v: v if isinstance(v, (ast.Dict, ast.Tuple, ast.List)) else None)
        self.bound = set(parameter_names(function)) | {
            n.id for n in own_nodes(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        }
        stored: dict[str, list[tuple[str, ast.expr]]] = {}
        allowed: set[int] = set()  # a name handed to a queue, or the base of a store into it
        for node in own_nodes(function):
            for name, key, value, base in _stores(node):
                allowed.add(id(base))
                stored.setdefault(name, []).append((key, value))
            if isinstance(node, ast.Call) and _hands_on_later(node):
                allowed.update(id(a) for a in (*node.args, *(k.value for k in node.keywords)))
        nested = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)} - {
            n.id for n in own_nodes(function) if isinstance(n, ast.Name)
        }
        for name in nested:
            literals.pop(name, None)  # a nested function or lambda may change it
        for node in own_nodes(function):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in allowed:
                literals.pop(node.id, None)  # `same = arguments`: changed through another name
        self._mappings: dict[str, list[tuple[str, ast.expr]]] = {}
        self._sequences: dict[str, list[ast.expr]] = {}
        for name, literal in literals.items():
            if isinstance(literal, ast.Dict):
                self._mappings[name] = _stored_into(mapping(literal), stored.get(name, []))
            elif name not in stored and isinstance(literal, (ast.Tuple, ast.List)):
                self._sequences[name] = list(literal.elts)

    def mapping(self, value: ast.expr | None) -> list[tuple[str, ast.expr]]:
        if isinstance(value, ast.Dict):
            return mapping(value)
        return self._mappings.get(value.id, []) if isinstance(value, ast.Name) else []

    def sequence(self, value: ast.expr | None) -> list[ast.expr]:
        if isinstance(value, (ast.Tuple, ast.List)):
            return list(value.elts)
        return self._sequences.get(value.id, []) if isinstance(value, ast.Name) else []


def _hands_on_later(call: ast.Call) -> bool:
    """A call that queues a task or hands a function to what runs it later (`task.apply_async((),
    arguments)`, `Thread(target=f, kwargs=arguments)`): it reads the mapping, it does not change it."""
    func = call.func
    return isinstance(func, ast.Attribute) and func.attr in QUEUES_A_CALL or called_name(call) in RUNS_A_FUNCTION_LATER


def _stores(node: ast.AST) -> Iterator[tuple[str, str, ast.expr, ast.Name]]:
    """The stores into a name's items under a constant key a statement makes (`arguments["kind"]
    = k`), with the value put there (where one plain target takes it: else a value not read),
    and the name's node. Any other change (`.update(...)`, `del`, `+=`, a key not constant)
    leaves the name used another way, which `Arguments` does not read."""
    if not isinstance(node, (ast.Assign, ast.AnnAssign)):
        return
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        for part in ast.walk(target):
            if (
                isinstance(part, ast.Subscript)
                and isinstance(part.value, ast.Name)
                and isinstance(part.slice, ast.Constant)
                and isinstance(part.slice.value, str)
            ):
                plain = part is target and len(targets) == 1 and node.value is not None
                yield part.value.id, part.slice.value, node.value if plain and node.value else _OPAQUE, part.value


def _stored_into(items: list[tuple[str, ast.expr]], stores: list[tuple[str, ast.expr]]) -> list[tuple[str, ast.expr]]:
    """A mapping literal's items with what the function stores into it: a key stored once that
    the literal lacks holds that value; one stored twice, or over the literal's, is not read."""
    counts = Counter(key for key, _value in stores)
    given = dict(items)
    for key, value in stores:
        given[key] = value if counts[key] == 1 and key not in dict(items) else _OPAQUE
    return list(given.items())


def handed(call: ast.Call, arguments: Arguments) -> tuple[str, Slots, ast.expr]:
    """(the function's name, [(slot, the record handed there)], the node that names it)."""
    func = call.func
    positional = list(call.args)
    keywords = [(k.arg, k.value) for k in call.keywords if k.arg]
    if isinstance(func, ast.Attribute) and func.attr == "s":
        return "", [], func  # a chain's signature: its first argument is the previous task's result
    later = _run_later(call, arguments)
    if later is not None:
        return later
    if (
        isinstance(func, ast.Attribute)
        and func.attr in QUEUES_A_CALL
        and isinstance(func.value, (ast.Name, ast.Attribute))
        and not (func.attr in _SENDS and (not isinstance(func.value, ast.Name) or func.value.id in arguments.bound))
    ):
        task = func.value
        if func.attr in ARGUMENTS_KEYWORDS:  # its arguments as a sequence and a mapping, not its own
            given = positional if func.attr == "apply_async" else []
            positional = arguments.sequence(given[0]) if given else []
            keywords = arguments.mapping(given[1]) if len(given) > 1 else []
            for keyword in call.keywords:
                if keyword.arg == "args":
                    positional += arguments.sequence(keyword.value)
                elif keyword.arg == "kwargs":
                    keywords += arguments.mapping(keyword.value)
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
        return func.attr, [(ON_THE_CLASS, ("", "")), *slots], func
    if isinstance(func, ast.Attribute):
        return func.attr, [*slots, (RECEIVER, record(func.value))], func
    return "", slots, func


def _run_later(call: ast.Call, arguments: Arguments) -> tuple[str, Slots, ast.expr] | None:
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
        if args_keyword and keyword.arg == args_keyword:
            positional += arguments.sequence(keyword.value)
        elif kwargs_keyword and keyword.arg == kwargs_keyword:
            keywords += arguments.mapping(keyword.value)
    name = target.id if isinstance(target, ast.Name) else target.attr
    return name, _slots(positional, keywords), target


def _runs_once(call: ast.Call) -> bool:
    """APScheduler's `add_job(f, ...)` with no trigger (run now) or a "date" one."""
    trigger = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "trigger"), None)
    return trigger is None or isinstance(trigger, ast.Constant) and trigger.value == "date"


def mapping(value: ast.Dict) -> list[tuple[str, ast.expr]]:
    return [
        (k.value, v)
        for k, v in zip(value.keys, value.values, strict=True)
        if isinstance(k, ast.Constant) and isinstance(k.value, str)
    ]


def _slots(positional: Iterable[ast.expr], keywords: Iterable[tuple[str, ast.expr]]) -> Slots:
    return [(str(i), record(a)) for i, a in enumerate(positional)] + [(k, record(v)) for k, v in keywords]


def record(argument: ast.expr) -> Record:
    """The name a passed row is known by, and the column of it passed: `pq` or its key
    (`pq.pk`, `pq.id`, also as text: `str(pq.pk)`) as ("pq", ""), a key column of another name
    (`export.token`) as ("export", "token"); any other attribute is not the row."""
    if isinstance(argument, ast.Call) and called_name(argument) == "str" and len(argument.args) == 1:
        return record(argument.args[0]) if isinstance(argument.func, ast.Name) and not argument.keywords else ("", "")
    if isinstance(argument, ast.Attribute) and isinstance(argument.value, ast.Name):
        if argument.attr in ("pk", "id"):
            return argument.value.id, ""
        if KEY_COLUMN.search(argument.attr):
            return argument.value.id, argument.attr
        return "", ""
    return (argument.id if isinstance(argument, ast.Name) else ""), ""


def bound_only_by(
    function: Function, judge: Callable[[ast.expr], T | None], keeps: Callable[[str, ast.expr], bool] | None = None
) -> dict[str, T]:
    """Names every binding of which in the function is a plain assignment that `judge` gives one
    same answer for; a name also bound another way (in a loop, unpacked, `as job`) has none. A
    binding `keeps` says holds what the name held already (a row read again by its own key) is
    not one, nor is `None`: no method runs on it and no row is handed with it (`delivery =
    None`, then `delivery = Delivery.objects.create()` in a `try`)."""
    answers: dict[str, T | None] = {}
    judged: set[int] = set()
    for node in own_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            judged.add(id(node.targets[0]))
            if keeps is not None and keeps(name, node.value) or _none(node.value):
                continue
            answer = judge(node.value)
            answers[name] = answer if answers.get(name, answer) == answer else None
    for node in own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in judged:
            answers[node.id] = None
    return {name: answer for name, answer in answers.items() if answer is not None}


def _none(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value is None
