"""What a retry decorator's test of the function's answer reads: the function's own yes or no
(every `return` a `True`, `False`, `None`, a comparison, `all(...)`), or, for a predicate named
by a function of the module, the test that function returns, as a lambda would spell it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def answers_yes_or_no(model: ModuleModel, function: cst.FunctionDef) -> bool:
    """Every `return` of the function gives a yes or no (and it has one): what a test of its
    answer reads is the function's own verdict."""
    values = [n.value for n in model.iter_nodes(function.body) if isinstance(n, cst.Return)]
    return bool(values) and all(v is not None and _yes_or_no(v) for v in values)


def _yes_or_no(value: cst.BaseExpression) -> bool:
    """`True`, `False`, `None`, a comparison (`port_id in ids`), `not x`, `all(...)`/`any(...)`,
    or `and`/`or` of such."""
    if isinstance(value, cst.Name):
        return value.value in ("True", "False", "None")
    if isinstance(value, cst.BooleanOperation):
        return _yes_or_no(value.left) and _yes_or_no(value.right)
    if isinstance(value, cst.Call):
        return isinstance(value.func, cst.Name) and value.func.value in ("all", "any", "bool", "isinstance", "hasattr")
    return (
        isinstance(value, cst.Comparison)
        or isinstance(value, cst.UnaryOperation)
        and isinstance(value.operator, cst.Not)
    )


def returned_test(model: ModuleModel, name: str) -> cst.BaseExpression | None:
    """What a function of this module returns, where its body is that `return` alone (a
    docstring aside): the test a lambda would spell."""
    target = model.module_defs.get(name)
    if isinstance(target, cst.FunctionDef) and isinstance(target.body, cst.SimpleStatementSuite):
        body: list[cst.CSTNode] = list(target.body.body)  # `def _gone(x): return x is None`
    else:
        lines = [s for s in target.body.body if not _a_docstring(s)] if isinstance(target, cst.FunctionDef) else []
        body = list(lines[0].body) if len(lines) == 1 and isinstance(lines[0], cst.SimpleStatementLine) else []
    return body[0].value if len(body) == 1 and isinstance(body[0], cst.Return) else None


def _a_docstring(statement: cst.CSTNode) -> bool:
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
    return isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString))
