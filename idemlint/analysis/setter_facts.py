"""The project's state setters, read with the standard library's `ast` (about ten times
cheaper than libcst, and only files that define such methods are parsed): is each one
guarded by a check of the instance it writes (`self`, or the record it is handed) before it
writes, or does it, for all its name, write no state at all (`set_status` that sets a
`finished` flag and writes a progress file)?"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from idemlint.analysis.db.records import DJANGO_CHAIN, DJANGO_READ_TERMINALS
from idemlint.analysis.final_states import is_state_attribute
from idemlint.analysis.handed_calls import bound_only_by
from idemlint.analysis.syntax import own_nodes, parameter_names, stdlib_tree
from idemlint.knowledge.states import STATE_COLUMNS, STATE_SETTER_DEFINITION
from idemlint.knowledge.vocabulary import DEFAULT, Vocabulary

GUARDED, UNGUARDED, STATELESS = "guarded", "unguarded", "stateless"
# guarded, and a move to the state the record holds already returns as a move made returns
SKIPS_REPEATS = "skips-repeats"


def setter_facts(source: bytes | str, vocabulary: Vocabulary = DEFAULT) -> dict[str, str]:
    """{setter method name: GUARDED, SKIPS_REPEATS, UNGUARDED or STATELESS} for the state
    setters a module defines (two definitions in it: the weaker; a stub gives none)."""
    raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    extra = vocabulary.state_columns - STATE_COLUMNS
    lowered = raw.lower() if extra else raw
    if not STATE_SETTER_DEFINITION.search(raw) and not any(column.encode() in lowered for column in extra):
        return {}
    try:
        tree = stdlib_tree(raw)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    facts: dict[str, str] = {}
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for method in cls.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and vocabulary.is_state_setter(method.name):
                if _extends_base(method):
                    continue  # `super().set_status(status)` first: as guarded as the base it extends
                if _is_stub(method):
                    continue  # an abstract or protocol method: what the real ones do decides
                if not _may_write_state(method, cls, vocabulary):
                    verdict = STATELESS
                else:
                    guards = _guards_before_the_write(method)
                    refusals = [g for g in guards if not _same_state_only(g, method)]
                    verdict = (
                        UNGUARDED
                        if not refusals  # a test of the state it holds already refuses no move back
                        else SKIPS_REPEATS
                        if any(_answers_as_done(g) for g in guards if g not in refusals)
                        else GUARDED
                    )
                facts[method.name] = weaker(facts.get(method.name, verdict), verdict)
    return facts


def by_verdict(setters: Mapping[str, str]) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """The setters' names split as the project index keeps them: guarded (those that skip
    repeats too), unguarded, stateless, skipping repeats."""
    guarded, unguarded, stateless, skipping = (
        frozenset(n for n, v in setters.items() if v in kinds)
        for kinds in ((GUARDED, SKIPS_REPEATS), (UNGUARDED,), (STATELESS,), (SKIPS_REPEATS,))
    )
    return guarded, unguarded, stateless, skipping


def weaker(one: str, other: str) -> str:
    """What a call of a name two definitions share may do: unguarded if either is, skipping
    repeats if either does, stateless only if both are (a stateless one beside a guarded one
    moves no record back either)."""
    for verdict in (UNGUARDED, SKIPS_REPEATS):
        if verdict in (one, other):
            return verdict
    return STATELESS if one == other == STATELESS else GUARDED


def _is_stub(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A body of a docstring, `...`, `pass` or `raise NotImplementedError` only."""
    body = method.body[1:] if method.body and _is_docstring(method.body[0]) else method.body
    return all(
        isinstance(s, ast.Pass)
        or isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Constant)
        or isinstance(s, ast.Raise)
        and _exception_name(s.exc) == "NotImplementedError"
        for s in body
    )


def _exception_name(raised: ast.expr | None) -> str:
    """`NotImplementedError` of `raise NotImplementedError` and of `raise NotImplementedError("...")`."""
    raised = raised.func if isinstance(raised, ast.Call) else raised
    return raised.id if isinstance(raised, ast.Name) else raised.attr if isinstance(raised, ast.Attribute) else ""


# what a record's own method may call on it and still write no state: it stores or re-reads the row
_ROW_ONLY = frozenset({"save", "refresh_from_db", "full_clean", "clean", "delete"})


# calls that only compute, print or serialise what they are handed
_PURE_CALLS = frozenset(
    {"print", "str", "bytes", "repr", "len", "int", "float", "bool", "dict", "list", "tuple", "set", "open"}
    | {"dumps", "dump", "format", "join", "encode", "decode", "isoformat", "strftime", "now", "utcnow"}
)


def _may_write_state(
    method: ast.FunctionDef | ast.AsyncFunctionDef, cls: ast.ClassDef, vocabulary: Vocabulary, depth: int = 0
) -> bool:
    """Unless shown otherwise, yes. Shown otherwise: the method (nested functions and lambdas
    included) stores into no attribute named like a state (`self.status`, `ticketStatus`) nor
    into what `self` or an attribute holds (`self["state"]`, `self.data["state"]`); its calls
    on `self` are `save()` and the like or the class's own methods, shown so too; and any other
    call it hands `self` or a parameter to only computes or prints (`json.dumps`, `print`,
    `log.info`) or writes a file it opened itself (`with open(...) as out: out.write(...)`)."""
    if depth > 2:
        return True
    own = {f.name: f for f in cls.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
    handed = {"self", *parameter_names(method)} - {"cls"}
    opened = {
        item.optional_vars.id
        for node in ast.walk(method)
        if isinstance(node, (ast.With, ast.AsyncWith))
        for item in node.items
        if isinstance(item.optional_vars, ast.Name)
    }
    for node in ast.walk(method):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if _writes_a_document(target, node, vocabulary, handed - {"self"}):
                    continue
                for part in ast.walk(target):
                    if isinstance(part, ast.Subscript) and isinstance(part.value, (ast.Attribute, ast.Name)):
                        if not isinstance(part.value, ast.Name) or part.value.id == "self":
                            return True  # `self.data["state"] = new`, `self["status"] = new`
                    if isinstance(part, ast.Attribute) and (
                        _named_as_state(part.attr, vocabulary) or part.attr == "__dict__"
                    ):
                        return True
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in ("setattr", "__setattr__", "super", "update", "update_or_create", "execute", "vars") or (
                name != method.name and vocabulary.is_state_setter(name)
            ):
                return True
            receiver = func.value if isinstance(func, ast.Attribute) else None
            if isinstance(receiver, ast.Name) and receiver.id == "self" and name not in _ROW_ONLY:
                called = own.get(name)
                if called is None or called is method or _may_write_state(called, cls, vocabulary, depth + 1):
                    return True  # inherited, or shown to write
                continue
            quiet = (
                name in _PURE_CALLS
                or _log_line(node, name)
                or _reads_rows(node)
                or isinstance(receiver, ast.Name)
                and (receiver.id in opened or "log" in receiver.id.lower())
            )
            given = [a for a in (*node.args, *(k.value for k in node.keywords))]
            if not quiet and any(isinstance(a, ast.Name) and a.id in handed for a in given):
                return True  # `apply_status(self, new)`, `store.write(pk, new)`: it may write
            if not quiet and isinstance(receiver, ast.Attribute) and name not in _ROW_ONLY:
                return True  # `self.store.write(...)`, `frappe.db.set_value(...)`: another object acts
    return False


def _reads_rows(call: ast.Call) -> bool:
    """`Manifest.objects.select_for_update().get(id=manifest_id)`: a read through a model's
    manager, handed a parameter as its key; it writes nothing."""
    node: ast.expr = call
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr not in DJANGO_CHAIN | DJANGO_READ_TERMINALS:
            return False
        node = node.func.value
        if isinstance(node, ast.Attribute) and node.attr == "objects":
            return True
    return False


def _log_line(call: ast.Call, name: str) -> bool:
    """`log_json(msg="...", manifest_id=manifest_id)`: a call named for logging, its first word
    `log`, handed only keywords or text and not the record (`transition_and_log(self, status)`
    may write it)."""
    return (
        name.lower().split("_", 1)[0] == "log"
        and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)
        and not any(isinstance(k.value, ast.Name) and k.value.id == "self" for k in call.keywords)
    )


def _writes_a_document(target: ast.expr, statement: ast.stmt, vocabulary: Vocabulary, params: set[str]) -> bool:
    """`manifest.state[step][interval] = now`, `manifest.state = {}`: an attribute named like a
    state that holds a mapping (per-step times, a journal), written by entry or emptied. No
    record moves from one state to another there. Not an entry that stores a state: a value the
    setter is handed (`self.step_status[step] = status`), text or a constant (`= Status.DONE`),
    outside the keys that pick the entry; and `self.data["state"] = new` (a state kept under a
    key of another attribute) and `self.state = new` still write one."""
    base, entries = target, 0
    while isinstance(base, ast.Subscript):
        base, entries = base.value, entries + 1
    if not isinstance(base, ast.Attribute) or not _named_as_state(base.attr, vocabulary):
        return False
    value = getattr(statement, "value", None)
    if entries:
        return value is not None and not _may_hold_a_state(value, params)
    return isinstance(statement, ast.Assign) and (
        isinstance(value, (ast.Dict, ast.List))
        and not (value.keys if isinstance(value, ast.Dict) else value.elts)
        or isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id in ("dict", "list")
        and not value.args
        and not value.keywords
    )


def _may_hold_a_state(value: ast.expr, params: set[str]) -> bool:
    """Text, a constant (`Status.DONE`, `DONE`) or a parameter, outside the keys of a subscript
    (`state[step][START]` picks an entry): what may be a state's name."""
    keys = {id(n) for node in ast.walk(value) if isinstance(node, ast.Subscript) for n in ast.walk(node.slice)}
    for node in ast.walk(value):
        if id(node) in keys:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return True
        if isinstance(node, ast.Name) and (node.id in params or node.id.isupper()):
            return True
        if isinstance(node, ast.Attribute) and (node.attr.isupper() or node.attr[:1].isupper()):
            return True
    return False


def _named_as_state(attribute: str, vocabulary: Vocabulary) -> bool:
    """`status`, `order_state`, `ticketStatus`: an attribute a state may be kept in."""
    lowered = attribute.lower()
    return is_state_attribute(attribute) or lowered in vocabulary.state_columns or lowered.endswith(("status", "state"))


def _guards_before_the_write(method: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.If]:
    """The `if`s on the instance the setter writes (`self`, or the record it is handed: `def
    update_status(cls, order, new)`) that return or raise, before it writes. The leading
    `try:` and `with` blocks are read through (`with transaction.atomic():`); the instance set
    from a value the function loaded (`order.status = current`, re-read under a lock) is a
    refresh, not the write. A local every binding of which reads the instance (`old = self.status`,
    `allowed = MOVES.get(old, ())`) is as good as the instance in the test."""
    params = parameter_names(method)
    instances = {"self"} | {p for p in params if p not in ("self", "cls") and _sets_an_attribute_of(method, p)}
    loaded = _rereads(method, instances)
    derived = _read_from(method, instances)
    guards: list[ast.If] = []
    for statement in _leading(method.body):
        if (
            isinstance(statement, ast.If)
            and _reads_an_instance(statement.test, instances, derived)
            and _leaves(statement.body)
        ):
            guards.append(statement)
        elif _writes_an_instance(statement, instances, loaded):
            break
    return guards


def _same_state_only(guard: ast.If, method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`if new == self.status:` (or `old = self.status` then `if new_status == old:`): a test of
    the state asked for against the one held, which refuses no other move, whatever it does."""
    test = guard.test
    params = set(parameter_names(method)) - {"self", "cls"}
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.Is))
        and any(isinstance(side, ast.Name) and side.id in params for side in (test.left, *test.comparators))
    )


def _answers_as_done(guard: ast.If) -> bool:
    """The guard returns what a move made returns (nothing, `None`, `self`): its caller cannot
    tell a repeat; a refusal (`raise`) or an answer (`return False`) it can."""
    last = guard.body[-1]
    if not isinstance(last, ast.Return):
        return False
    value = last.value
    return (
        value is None
        or isinstance(value, ast.Constant)
        and value.value is None
        or isinstance(value, ast.Name)
        and value.id == "self"
    )


def _read_from(method: ast.FunctionDef | ast.AsyncFunctionDef, instances: set[str]) -> set[str]:
    """The locals (not parameters), each bound once by a plain assignment, whose value reads an
    instance or such a local bound before it: one pass in the order of the source."""
    params = set(parameter_names(method))
    derived: set[str] = set()
    bound = bound_only_by(method, lambda value: value)
    for name, value in sorted(bound.items(), key=lambda item: (item[1].lineno, item[1].col_offset)):
        if name not in params and _reads_an_instance(value, instances, derived):
            derived.add(name)
    return derived


def _leading(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for statement in body:
        if isinstance(statement, ast.Try) and all(_leaves(h.body) for h in statement.handlers):
            yield from _leading(statement.body)  # a refusal raised there leaves through every handler
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _leading(statement.body)
        else:
            yield statement


def _sets_an_attribute_of(method: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> bool:
    return any(
        isinstance(node, ast.Assign)
        and any(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == name for t in node.targets
        )
        for node in own_nodes(method)
    )


def _rereads(method: ast.FunctionDef | ast.AsyncFunctionDef, instances: set[str]) -> set[str]:
    """Locals every binding of which re-reads an instance's own row (`current = Order.objects
    .select_for_update().values_list("status", flat=True).get(pk=order.pk)`): not a parameter."""
    keys = tuple(f"{name}.{key}" for name in instances for key in ("pk", "id"))
    params = set(parameter_names(method))

    def rereads(value: ast.expr) -> bool | None:
        return isinstance(value, ast.Call) and any(key in ast.unparse(value) for key in keys) or None

    return set(bound_only_by(method, rereads)) - params


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


def _reads_an_instance(test: ast.expr, instances: set[str], derived: set[str]) -> bool:
    """The test reads an attribute of an instance, or a local read from one (`_read_from`)."""
    return any(
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id in instances
        or isinstance(node, ast.Name)
        and node.id in derived
        for node in ast.walk(test)
    )


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _writes_an_instance(statement: ast.stmt, instances: set[str], loaded: set[str]) -> bool:
    for node in ast.walk(statement):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            refresh = isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in loaded
            if not refresh and any(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in instances
                for t in targets
            ):
                return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in instances
            and node.func.attr.startswith("save")
        ):
            return True
    return False
