"""The project's state setters, read with the standard library's `ast` (about ten times
cheaper than libcst, and only files that define such methods are parsed): is each one
guarded by a check of the instance's own state before it writes?"""

from __future__ import annotations

import ast

from idemlint.knowledge.states import STATE_COLUMNS, STATE_SETTER_DEFINITION
from idemlint.knowledge.vocabulary import DEFAULT, Vocabulary


def setter_facts(source: bytes | str, vocabulary: Vocabulary = DEFAULT) -> dict[str, bool]:
    """{setter method name: guarded?} for the state setters a module defines."""
    raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    extra = vocabulary.state_columns - STATE_COLUMNS
    lowered = raw.lower() if extra else raw
    if not STATE_SETTER_DEFINITION.search(raw) and not any(column.encode() in lowered for column in extra):
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
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and vocabulary.is_state_setter(method.name):
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
