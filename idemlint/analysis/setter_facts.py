"""The project's state setters, read with the standard library's `ast` (about ten times
cheaper than libcst, and only files that define such methods are parsed): is each one
guarded by a check of the instance it writes (`self`, or the record it is handed) before it
writes, or does it, for all its name, write no state at all (`set_status` that sets a
`finished` flag and writes a progress file)?"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping

from idemlint.analysis.final_states import is_state_attribute
from idemlint.analysis.handed_calls import bound_only_by
from idemlint.analysis.syntax import own_nodes, parameter_names, stdlib_tree
from idemlint.knowledge.states import STATE_COLUMNS, STATE_SETTER_DEFINITION
from idemlint.knowledge.vocabulary import DEFAULT, Vocabulary

GUARDED, UNGUARDED, STATELESS = "guarded", "unguarded", "stateless"
QUIET = "quiet"  # guarded, and a move to the state the record is in already returns as if it were done


def setter_facts(source: bytes | str, vocabulary: Vocabulary = DEFAULT) -> dict[str, str]:
    """{setter method name: GUARDED, QUIET, UNGUARDED or STATELESS} for the state setters a
    module defines (two definitions in it: the weaker)."""
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
                if not _may_write_state(method, vocabulary):
                    verdict = STATELESS
                else:
                    guards = _guards_before_the_write(method)
                    verdict = (
                        UNGUARDED
                        if not guards
                        else QUIET
                        if any(_skips_a_repeat(g, method) for g in guards)
                        else GUARDED
                    )
                facts[method.name] = weaker(facts.get(method.name, verdict), verdict)
    return facts


def by_verdict(setters: Mapping[str, str]) -> tuple[frozenset[str], frozenset[str], frozenset[str], frozenset[str]]:
    """The setters' names split as the project index keeps them: guarded (the quiet ones too),
    unguarded, stateless, quiet."""
    guarded, unguarded, stateless, quiet = (
        frozenset(n for n, v in setters.items() if v in kinds)
        for kinds in ((GUARDED, QUIET), (UNGUARDED,), (STATELESS,), (QUIET,))
    )
    return guarded, unguarded, stateless, quiet


def weaker(one: str, other: str) -> str:
    """What a call of a name two definitions share may do: unguarded if either is, quiet on a
    repeat if either is, stateless only if both are (a stateless one beside a guarded one moves
    no record back either)."""
    for verdict in (UNGUARDED, QUIET):
        if verdict in (one, other):
            return verdict
    return STATELESS if one == other == STATELESS else GUARDED


def _may_write_state(method: ast.FunctionDef | ast.AsyncFunctionDef, vocabulary: Vocabulary) -> bool:
    """The method assigns an attribute named like a state (`self.status`, `order.payment_state`),
    or writes in a way not spelt out here: `setattr`, a query's `update(...)`, another setter,
    `super()`, `__dict__`."""

    def state_like(name: str) -> bool:
        return is_state_attribute(name) or name.lower() in vocabulary.state_columns

    for node in own_nodes(method):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for part in ast.walk(target):
                    if isinstance(part, ast.Attribute) and (state_like(part.attr) or part.attr == "__dict__"):
                        return True
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
            if name in ("setattr", "super", "update", "update_or_create", "execute") or (
                name != method.name and vocabulary.is_state_setter(name)
            ):
                return True
    return False


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


def _skips_a_repeat(guard: ast.If, method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """`if new == self.status: return` (or `old = self.status` then `if new_status == old:`):
    a move to the state the record holds already returns nothing, as a move made returns. Its
    caller cannot tell a duplicate from the first delivery; a refusal (`raise`) or an answer
    (`return False`) it can."""
    last = guard.body[-1]
    if not isinstance(last, ast.Return) or not (
        last.value is None or isinstance(last.value, ast.Constant) and last.value.value is None
    ):
        return False
    test = guard.test
    params = set(parameter_names(method)) - {"self", "cls"}
    return (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Eq, ast.Is))
        and any(isinstance(side, ast.Name) and side.id in params for side in (test.left, *test.comparators))
    )


def _read_from(method: ast.FunctionDef | ast.AsyncFunctionDef, instances: set[str]) -> set[str]:
    """The locals (not parameters) every binding of which reads an instance or another such local,
    followed to a fixed point."""
    params = set(parameter_names(method))
    derived: set[str] = set()

    def reads_one(value: ast.expr) -> bool | None:
        return _reads_an_instance(value, instances, derived) or None

    while True:
        found = set(bound_only_by(method, reads_one)) - params
        if found <= derived:
            return derived
        derived |= found


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
