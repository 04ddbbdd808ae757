"""Records every caller hands over fresh: a function the project calls only with a row the
caller has just made.

A job's status row is often created by the request that starts the job (`pq =
serializer.save()`, `status = FeedStatus.objects.create(...)`) and handed to the work that
runs it (`process_upload(pq)`, `mark_done.si(status.pk)`), which writes the row's state with no
test of its own. Only that run writes the row: a duplicate request makes a row of its own, so
the write moves no other run's record back (IDM103). The facts are the callers': a name the
project defines once, called (or queued: `.delay(...)`, `.apply_async(args=...)`, `.s(...)`,
`.si(...)`) only with such a row or its key, or with a parameter of a function that is itself
so called (followed to the end). Any other use of the name (a call with something else, the
name handed on as a value, spelt in a string, used in a file that is not parsed) and it is
not. Which argument is the row is not told apart: a function handed a fresh row and another
record is taken as writing the fresh one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from idemlint.analysis.caller_guards import names_used, names_used_otherwise
from idemlint.knowledge.orms import MAKES_A_ROW, QUEUES_A_CALL

# per file: (names each call of which hands over a fresh row; (name, functions whose own
# parameter it is handed); names used any other way; names the file defines, with repeats)
FreshFacts = tuple[frozenset[str], tuple[tuple[str, tuple[str, ...]], ...], frozenset[str], tuple[str, ...]]
NO_FRESH: FreshFacts = (frozenset(), (), frozenset(), ())

_MAY_MAKE = re.compile(rb"\.(?:a?create|save)\(")
_DEFINED = re.compile(rb"\bdef[ \t]+(\w+)")


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
        return frozenset(), (), names_used(source, defined), defined
    fresh: set[str] = set()
    handed: dict[str, set[str]] = {}
    other: set[str] = set()
    counted: set[int] = set()
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        made = _rows_made(function)
        params = {a.arg for a in (*function.args.posonlyargs, *function.args.args, *function.args.kwonlyargs)}
        for call in _calls(function):
            name, arguments, callee = _called(call)
            if not name:
                continue
            counted.add(id(callee))
            passed = {_record(arg) for arg in arguments}
            if passed & made:
                fresh.add(name)
            elif passed & params:
                handed.setdefault(name, set()).add(function.name)
            else:
                other.add(name)
    other |= names_used_otherwise(tree, counted)  # handed on as a value, at module level, in a string
    return (
        frozenset(fresh),
        tuple(sorted((name, tuple(sorted(functions))) for name, functions in handed.items())),
        frozenset(other),
        defined,
    )


def join_fresh_facts(files: Iterable[FreshFacts]) -> frozenset[str]:
    """The names of the functions the project calls only with a row the caller just made, or
    with a parameter of a function itself so called."""
    fresh: set[str] = set()
    used: set[str] = set()
    handed: dict[str, set[str]] = {}
    definitions: dict[str, int] = {}
    for made, passed_on, other, defined in files:
        fresh.update(made)
        used.update(other)
        for name, functions in passed_on:
            handed.setdefault(name, set()).update(functions)
        for name in defined:
            definitions[name] = definitions.get(name, 0) + 1
    candidates = {n for n in fresh | handed.keys() if n not in used and definitions.get(n) == 1}
    found: set[str] = set()
    while True:  # a parameter handed on is fresh where every function handing it on is so called
        more = {
            n
            for n in candidates - found
            if all(f in found for f in handed.get(n, ())) and (n in fresh or handed.get(n))
        }
        if not more:
            return frozenset(found)
        found |= more


def _rows_made(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names bound in the function to a row it makes: `Model.objects.create(...)`,
    `serializer.save(...)` (also run through a wrapper: `sync_to_async(serializer.save)(...)`),
    or `Model(...)` the function then saves (`row.save()`)."""
    made: set[str] = set()
    saved = {
        node.func.value.id
        for node in ast.walk(function)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in MAKES_A_ROW
        and isinstance(node.func.value, ast.Name)
    }
    for node in ast.walk(function):
        if not isinstance(node, ast.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            continue
        value = node.value.value if isinstance(node.value, ast.Await) else node.value
        if not isinstance(value, ast.Call):
            continue
        name = node.targets[0].id
        makers = [value.func, *(value.func.args if isinstance(value.func, ast.Call) else ())]
        if any(isinstance(m, ast.Attribute) and m.attr in MAKES_A_ROW for m in makers):
            made.add(name)
        elif isinstance(value.func, ast.Name) and value.func.id[:1].isupper() and name in saved:
            made.add(name)
    return made


def _calls(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterable[ast.Call]:
    """The calls in the function's own body, not in functions nested in it."""
    stack: list[ast.AST] = list(function.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Call):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def _called(call: ast.Call) -> tuple[str, list[ast.expr], ast.expr]:
    """(the function's name, what it is handed, the node that names it): `process(pq)`,
    `self.process(pq)`, queued as a task (`process.delay(pq.pk)`, `process.apply_async(args=(pq.pk,))`,
    `process.si(pq.pk)`)."""
    func = call.func
    arguments = [*call.args, *(k.value for k in call.keywords)]
    if (
        isinstance(func, ast.Attribute)
        and func.attr in QUEUES_A_CALL
        and isinstance(func.value, (ast.Name, ast.Attribute))
    ):
        task = func.value
        name = task.id if isinstance(task, ast.Name) else task.attr
        for keyword in call.keywords:
            if keyword.arg in ("args", "kwargs") and isinstance(keyword.value, (ast.Tuple, ast.List, ast.Dict)):
                arguments += list(keyword.value.values if isinstance(keyword.value, ast.Dict) else keyword.value.elts)
        return name, arguments, task
    if isinstance(func, ast.Name):
        return func.id, arguments, func
    if isinstance(func, ast.Attribute):
        return func.attr, arguments, func
    return "", arguments, func


def _record(argument: ast.expr) -> str:
    """The name a passed row is known by: `pq`, `pq.pk`, `pq.id`."""
    if isinstance(argument, ast.Attribute) and argument.attr in ("pk", "id") and isinstance(argument.value, ast.Name):
        return argument.value.id
    return argument.id if isinstance(argument, ast.Name) else ""
