"""Records every caller hands over fresh: a parameter the project fills only with a row the
caller has just made.

A job's status row is often created by the request that starts the job (`pq =
serializer.save()` in `perform_create`, `status = FeedStatus.objects.create(...)`) and handed to
the work that runs it (`process_upload(pq)`, `mark_done.si(status.pk)`), which writes the row's
state with no test of its own. Only that run writes the row: a duplicate request makes a row of
its own, so the write moves no other run's record back (IDM103). The facts are the callers',
per parameter: a function the project defines once, called (or queued: `.delay(...)`,
`.apply_async(args=...)`, `.si(...)`) only with such a row or its key in that parameter's
place, or with a parameter of a function that is itself so called (followed to the end). A row
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
from collections.abc import Iterable

from idemlint.analysis.chosen_rows import own_nodes
from idemlint.analysis.names_used import names_used, names_used_otherwise
from idemlint.knowledge.orms import MAKES_A_ROW, QUEUES_A_CALL

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
_MAY_MAKE = re.compile(rb"\.(?:a?create|a?save|delay|apply_async|si?)\(")
_DEFINED = re.compile(rb"\bdef[ \t]+(\w+)")
_RECEIVER = "<receiver>"
_ON_THE_CLASS = "<called on the class>"  # `Model.method(a, b)`: positions count from the first parameter but `cls`


def fresh_facts(source: bytes, tree: ast.Module | None) -> FreshFacts:
    """One file's calls that hand over a row made just before (or a parameter, to follow), and
    every other name it uses. A file that makes no row is read by a regular expression alone."""
    defined = tuple(name.decode() for name in _DEFINED.findall(source))
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
        params = tuple(a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs))
        stored = {n.id for n in own_nodes(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        kept = {p for p in params if p not in stored}  # `upload = upload.duplicate_of`: no longer what was handed
        signatures.append((function.name, params, tuple(sorted(set(params) - kept))))
        made = _rows_made(function, makers) - set(params)
        for call in _calls(function):
            name, slots, callee = _called(call)
            if not name:
                continue
            counted.add(id(callee))
            sources = tuple(
                (slot, "" if record in made else f"{function.name}:{record}")
                for slot, record in slots
                if record in made or record in kept
            )
            if sources and any(slot == _ON_THE_CLASS for slot, _record in slots):
                sources = ((_ON_THE_CLASS, ""), *sources)  # how the positions count
            if sources:
                handed.append((name, sources))
            else:
                other.add(name)
    other |= names_used_otherwise(tree, counted)  # handed on as a value, at module level, in a string
    return tuple(handed), tuple(signatures), frozenset(other), defined


def join_fresh_facts(files: Iterable[FreshFacts]) -> frozenset[str]:
    """The parameters (`function:parameter`) the project fills only with a row the caller just
    made, or with a parameter itself so filled."""
    calls: dict[str, list[tuple[tuple[str, str], ...]]] = {}
    used: set[str] = set()
    signatures: dict[str, tuple[str, ...]] = {}
    rebound: set[str] = set()
    definitions: dict[str, int] = {}
    for handed, defined_with, other, defined in files:
        used.update(other)
        for name, sources in handed:
            calls.setdefault(name, []).append(sources)
        for name, params, again in defined_with:
            signatures[name] = params
            rebound.update(f"{name}:{p}" for p in again)
        for name in defined:
            definitions[name] = definitions.get(name, 0) + 1
    wanted: dict[str, list[dict[str, str]]] = {}  # function:parameter -> per call, where it came from
    for name, made in calls.items():
        if name in used or definitions.get(name) != 1 or name not in signatures:
            continue
        params = signatures[name]
        per_call = [_by_parameter(params, sources) for sources in made]
        for param in params:
            if f"{name}:{param}" not in rebound and all(param in call for call in per_call):
                wanted[f"{name}:{param}"] = [{"": call[param]} for call in per_call]
    found: set[str] = set()
    while True:  # a parameter handed on is fresh where the one it came from is
        more = {
            key
            for key, origins in wanted.items()
            if key not in found and all(o[""] == "" or o[""] in found for o in origins)
        }
        if not more:
            return frozenset(found)
        found |= more


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
    verdicts: dict[str, bool] = {}
    judged: set[int] = set()
    for node in own_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            judged.add(id(node.targets[0]))
            verdicts[name] = verdicts.get(name, True) and _makes_a_row(node.value, creates, makers, holding)
    for node in own_nodes(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and id(node) not in judged:
            verdicts[node.id] = False  # bound some other way too: in a loop, unpacked, `as job`
    return {name for name, makes in verdicts.items() if makes}


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
    called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
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
    """The calls in the function's own body, not in functions nested in it."""
    return (node for node in own_nodes(function) if isinstance(node, ast.Call))


def _called(call: ast.Call) -> tuple[str, list[tuple[str, str]], ast.expr]:
    """(the function's name, [(slot, the record handed there)], the node that names it):
    `process(pq)`, `pq.process()`, queued as a task (`process.delay(pq.pk)`,
    `process.apply_async(args=(pq.pk,))`, `process.si(pq.pk)`)."""
    func = call.func
    positional = list(call.args)
    keywords = [(k.arg, k.value) for k in call.keywords if k.arg]
    if isinstance(func, ast.Attribute) and func.attr == "s":
        return "", [], func  # a chain's signature: its first argument is the previous task's result
    if (
        isinstance(func, ast.Attribute)
        and func.attr in QUEUES_A_CALL
        and isinstance(func.value, (ast.Name, ast.Attribute))
    ):
        task = func.value
        for keyword in call.keywords if func.attr == "apply_async" else ():
            if keyword.arg == "args" and isinstance(keyword.value, (ast.Tuple, ast.List)):
                positional += keyword.value.elts
            elif keyword.arg == "kwargs" and isinstance(keyword.value, ast.Dict):
                keywords += [
                    (k.value, v)
                    for k, v in zip(keyword.value.keys, keyword.value.values, strict=True)
                    if isinstance(k, ast.Constant) and isinstance(k.value, str)
                ]
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
        return func.attr, [(_ON_THE_CLASS, ""), *slots], func
    if isinstance(func, ast.Attribute):
        return func.attr, [*slots, (_RECEIVER, _record(func.value))], func
    return "", slots, func


def _slots(positional: list[ast.expr], keywords: list[tuple[str, ast.expr]]) -> list[tuple[str, str]]:
    return [(str(i), _record(a)) for i, a in enumerate(positional)] + [(k, _record(v)) for k, v in keywords]


def _record(argument: ast.expr) -> str:
    """The name a passed row is known by: `pq`, `pq.pk`, `pq.id`."""
    if isinstance(argument, ast.Attribute) and argument.attr in ("pk", "id") and isinstance(argument.value, ast.Name):
        return argument.value.id
    return argument.id if isinstance(argument, ast.Name) else ""
