"""Records every caller hands over fresh: a parameter the project fills only with a row the
caller has just made.

A job's status row is often created by the request that starts the job (`pq =
serializer.save()` in `perform_create`, `status = FeedStatus.objects.create(...)`) and handed to
the work that runs it (`process_upload(pq)`, `mark_done.si(status.pk)`), which writes the row's
state with no test of its own. Only that run writes the row: a duplicate request makes a row of
its own, so the write moves no other run's record back (IDM103). The facts are the callers',
per parameter: a function the project defines (under one name, however many times: every call
of the name must hand it over, and every definition with that parameter is judged by them),
called, queued (`.delay(...)`, `.apply_async(args=...)`, `.si(...)`, an actor's `.send(...)`: see
analysis/handed_calls.py) or handed with its
arguments to what calls it later (`Thread(target=f, args=(pk,))`, `executor.submit(f, pk)`,
`partial(f.delay, pk)`: knowledge/orms.py) only with such a row, its key, or its key column of
another name (`token=export.token`), in that parameter's place, or with a parameter of a function
that is itself so called, or the row it loads by one (`get(pk=pk)`, `session.get(Model, pk)`,
followed to the end). A row
is made where every binding of its name makes one: `Model.objects.create(...)`,
`serializer.save()` in a function that creates, from a serializer given no instance (elsewhere
it may hold one), a helper of the same file that returns a row it made (`item =
self._create_item(row)`), a model built with keywords that name no key and saved in the function
(`message = Message(subject=...); message.save()`); not `Model(pk=...)` or `Model(a, b)` then
`save()`, whose key may name a row that exists,
nor a name bound any other way too (a parameter, `first()` then `create()`), except to the same
row read again by its key (`export = Export.objects.get(id=export.id)`). A name bound only to a
made row's key (`key = str(run.uuid)`) hands that key. A parameter the
function binds again is no longer what it was handed, and a chain's `.s(...)` hands over
nothing (its first argument is the previous task's result). Any other use of the function's
name (a call handing over nothing fresh, the name handed on as a value, imported under another
name or spelt in a string, a use in a file that is not parsed) and none of its parameters is.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from idemlint.analysis.chosen_rows import called_name
from idemlint.analysis.handed_calls import ON_THE_CLASS, RECEIVER, Arguments, bound_only_by, handed, record
from idemlint.analysis.names_used import any_use, defined_names, names_used, names_used_otherwise
from idemlint.analysis.syntax import own_nodes, parameter_names, stdlib_tree
from idemlint.analysis.unique_keys import kept_unique
from idemlint.knowledge.orms import MAKES_A_ROW, ONE_ROW_LOOKUPS, RUNS_A_FUNCTION_LATER
from idemlint.knowledge.roles import (
    ENTRY_DECORATORS,
    ENTRY_SUFFIX,
    ENTRY_VERBS,
    QUEUE_DECORATORS,
    VIEW_DECORATORS,
    VIEW_REQUEST_PARAMETER,
)

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
    rb"\.(?:a?create|a?save|delay|apply_async|si?|send(?:_with_options)?)\(|\b(?:%s)\("
    % "|".join(RUNS_A_FUNCTION_LATER).encode()
)


def fresh_facts(source: bytes, tree: ast.Module | None) -> FreshFacts:
    """One file's calls that hand over a row made just before (or a parameter, to follow), and
    every other name it uses. A file that makes no row is read by a regular expression alone."""
    defined = defined_names(source)
    if tree is None and _MAY_MAKE.search(source):
        try:
            tree = stdlib_tree(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            tree = None
    if tree is None:
        return (), (), names_used(source, defined), defined
    handing: list[Handed] = []
    signatures: list[Signature] = []
    other: set[str] = set()
    counted: set[int] = set()
    functions = [f for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))]
    makers = {f.name for f in functions if _returns_a_new_row(f, frozenset())}
    for function in functions:
        if _called_from_outside(function):
            other.add(function.name)  # a route, a view, a receiver: what it is handed comes from anywhere
        params = parameter_names(function)
        stored = {n.id for n in own_nodes(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        kept = {p for p in params if p not in stored}  # `upload = upload.duplicate_of`: no longer what was handed
        signatures.append((function.name, params, tuple(sorted(set(params) - kept))))
        made = {name: how for name, how in _rows_made(function, makers).items() if name not in params}
        made_keys = _keys_held(function, set(made), set(params))
        loaded = _rows_loaded(function, kept)
        arguments = Arguments(function)
        for call in _calls(function):
            name, slots, callee = handed(call, arguments)
            if not name:
                continue
            counted.update((id(callee), id(call.func)))  # `task.send(pk)` queues `task`; it calls no `send`
            sources = tuple(
                (slot, origin)
                for slot, (name_of, column) in slots
                if (origin := _origin(function.name, made_keys.get(name_of, (name_of, column)), made, kept, loaded))
                is not None
            )
            if sources and any(slot == ON_THE_CLASS for slot, _record in slots):
                sources = ((ON_THE_CLASS, ""), *sources)  # how the positions count
            if sources:
                handing.append((name, sources))
            else:
                other.add(name)
    other |= names_used_otherwise(tree, counted)  # handed on as a value, at module level, in a string
    return tuple(handing), tuple(signatures), frozenset(other), defined


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
    function: str, handed_record: tuple[str, str], made: dict[str, str], kept: set[str], loaded: dict[str, str]
) -> str | None:
    """Where a handed value comes from: "" for a row made here (or its key), "=token" for a
    made row's key column of another name, either after "~Model:a,b" for a row built of those
    keywords and saved (new unless they name a key of the model: judged with the project's
    keys), "f:p" for what the function's parameter holds (a row loaded by it: "f:p@token" where
    looked up by that column), None for anything else."""
    record, attribute = handed_record
    if record in made:
        return made[record] + (f"={attribute}" if attribute else "")
    if attribute:
        return None
    if record in kept:
        return f"{function}:{record}"
    return loaded.get(record)


def join_fresh_facts(
    files: Iterable[FreshFacts], unique_keys: Mapping[str, tuple[frozenset[str], ...]]
) -> frozenset[str]:
    """The parameters (`function:parameter`) the project fills only with a row the caller just
    made (or its key), or with a parameter itself so filled; `function:parameter=token` where
    what fills it is such a row's key column of that name. A name several functions define is
    judged by every call of it, against each definition's parameters. A row built of keywords
    and saved is new where the project defines its model and no unique key of it is among them
    (`Feed(url=url)` with `url` its primary key may be a stored row, saved again)."""
    calls: dict[str, list[tuple[tuple[str, str], ...]]] = {}
    used: set[str] = set()
    signatures: dict[str, list[tuple[str, ...]]] = {}
    rebound: set[str] = set()
    definitions: dict[str, int] = {}
    for handing, defined_with, other, defined in files:
        used.update(any_use(other))
        for name, sources in handing:
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
                values = {_resolved(origin, resolved, unique_keys) for origin in origins}
                held = values.pop() if len(values) == 1 else None
                if held is not None:
                    more[key] = held
        if not more:
            return frozenset(key if column == "" else f"{key}={column}" for key, column in resolved.items())
        resolved.update(more)


def _resolved(
    origin: str, resolved: dict[str, str], unique_keys: Mapping[str, tuple[frozenset[str], ...]]
) -> str | None:
    """What a value of this origin holds: a fresh row or its key (""), a fresh row's key column
    of another name ("token"), or not known (None)."""
    if origin.startswith("~"):
        built, _, column = origin[1:].partition("=")
        model, _, keywords = built.partition(":")
        keys = unique_keys.get(model.lower())
        if keys is None or kept_unique(keys, keywords.split(",") if keywords else ()):
            return None  # a model the project does not define, or built by a key: perhaps a stored row
        return column
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
    on_the_class = any(slot == ON_THE_CLASS for slot, _origin in sources)
    offset = 1 if params[:1] == ("cls",) or not on_the_class and params[:1] == ("self",) else 0
    filled: dict[str, str] = {}
    for slot, origin in sources:
        if slot == RECEIVER:
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
    made = {name for name, how in _rows_made(function, makers).items() if not how}  # surely new
    return bool(returns) and all(
        r.value is not None
        and (_makes_a_row(r.value, False, makers) or isinstance(r.value, ast.Name) and r.value.id in made)
        for r in returns
    )


def _rows_made(function: ast.FunctionDef | ast.AsyncFunctionDef, makers: frozenset[str] | set[str]) -> dict[str, str]:
    """Names every binding of which in the function makes a row: `Model.objects.create(...)`,
    `serializer.save(...)` in a function that creates (also run through a wrapper:
    `sync_to_async(serializer.save)(...)`), or a call of a helper of the file that returns a
    row it made (`item = self._create_item(...)`); or a model built with keywords that name no
    key (`Model(subject=...)`) and saved in the function. Not `Model(pk=...)` or `Model(a, b)`
    then `save()`: its key may name a row that exists."""
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
    made_of: dict[str, set[str]] = {}  # the models each name's row-making bindings name ('' where not seen)
    for node in own_nodes(function):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if _makes_a_row(node.value, creates, makers, holding):
                made_of.setdefault(node.targets[0].id, set()).add(_model_of(node.value))

    def read_again(name: str, value: ast.expr) -> bool:
        """`export = Export.objects.get(id=export.id)`: the same row, read again by its own key
        from the model that made it (not `Archive.objects.get(id=export.id)`)."""
        if isinstance(value, ast.Await):
            value = value.value
        return (
            isinstance(value, ast.Call)
            and called_name(value) in ONE_ROW_LOOKUPS
            and len(value.keywords) == 1
            and not value.args
            and record(value.keywords[0].value) == (name, "")
            and value.keywords[0].arg in ("pk", "id")
            and _model_of(value) != ""
            and bool(made_of.get(name, set()) & {_model_of(value), ""})  # that model, or a helper's row
        )

    made = dict.fromkeys(
        bound_only_by(function, lambda value: _makes_a_row(value, creates, makers, holding) or None, read_again), ""
    )
    saved: set[str] = set()  # `feed.save()`
    set_after: dict[str, set[str]] = {}  # `feed.url = url` after it is built: a column it is given too
    for node in own_nodes(function):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
        ):
            if node.func.attr in ("save", "asave"):
                saved.add(node.func.value.id)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    set_after.setdefault(target.value.id, set()).add(target.attr)
    built = bound_only_by(function, _built_without_a_key)
    return {**{name: _with(how, set_after.get(name, set())) for name, how in built.items() if name in saved}, **made}


def _with(built: str, columns: set[str]) -> str:
    """`~Feed:title` with `url` set after it was built: `~Feed:title,url`. A key among them (`pk`,
    a unique column) is judged where the project's keys are joined."""
    model, _, keywords = built.partition(":")
    given = {k for k in keywords.split(",") if k} | columns
    return f"{model}:{','.join(sorted(given))}"


def _built_without_a_key(value: ast.expr) -> str | None:
    """`Message(subject=..., status=DRAFT)`: a model built with keywords only, none of them `pk`
    or `id`, as "~Message:status,subject"; saved, it is a new row unless the keywords name
    another key of the model (a positional argument may name one: not judged)."""
    if not isinstance(value, ast.Call) or value.args or not isinstance(value.func, (ast.Name, ast.Attribute)):
        return None
    model = value.func.id if isinstance(value.func, ast.Name) else value.func.attr
    keywords = [k.arg for k in value.keywords]
    if not model[:1].isupper() or any(k is None or k in ("pk", "id") for k in keywords):
        return None
    return f"~{model}:{','.join(sorted(k for k in keywords if k))}"


def _model_of(value: ast.expr) -> str:
    """The model a manager call names: the last capitalised part of the chain (`Export` of
    `Export.objects.create(...)` and of `models.Export.objects.get(...)`), or '' (a helper's
    `make_export()`, `self.model.objects.get(...)`)."""
    node = value.value if isinstance(value, ast.Await) else value
    while isinstance(node, (ast.Call, ast.Attribute)):
        if isinstance(node, ast.Attribute) and node.attr[:1].isupper():
            return node.attr
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) and node.id[:1].isupper() else ""


def _keys_held(
    function: ast.FunctionDef | ast.AsyncFunctionDef, made: set[str], params: set[str]
) -> dict[str, tuple[str, str]]:
    """Names every binding of which holds a made row's key (`key = str(run.uuid)`, `pk = row.pk`):
    handed on, they hand the row's key."""

    def key_of_a_made_row(value: ast.expr) -> tuple[str, str] | None:
        found = record(value)
        return found if found[0] in made and isinstance(value, (ast.Attribute, ast.Call)) else None

    held = bound_only_by(function, key_of_a_made_row)
    return {name: key for name, key in held.items() if name not in params and name not in made}


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


def _rows_loaded(function: ast.FunctionDef | ast.AsyncFunctionDef, kept: set[str]) -> dict[str, str]:
    """Names every binding of which loads one row by a parameter's value, with where that value
    comes from: `run = Run.objects.get(pk=run_id)` as "f:run_id", `Export.objects.get(token=token)` as "f:token@token". The row is what the
    parameter held, if it held a fresh row's key."""
    return bound_only_by(function, lambda value: (found := _loaded_by(value, kept)) and f"{function.name}:{found}")


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
