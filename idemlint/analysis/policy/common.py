"""What every library module reads the same way: catch-all exceptions, non-retryable
statuses, and literal values (`None`, `False`, `0`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.model import ModuleModel, iter_nodes

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

CATCH_ALL = {"Exception", "BaseException", "builtins.Exception", "builtins.BaseException"}
NON_RETRYABLE_STATUSES = {400, 401, 403, 404, 405, 410, 422}


def is_catch_all(model: ModuleModel, expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Tuple, cst.List)):
        return any(is_catch_all(model, e.value) for e in expr.elements)
    return (model.qualname(expr) or "") in CATCH_ALL


def handler_catches_all(model: ModuleModel, handler: cst.ExceptHandler) -> bool:
    caught = caught_expression(model, handler)
    return caught is None or is_catch_all(model, caught)


def caught_expression(model: ModuleModel, handler: cst.ExceptHandler) -> cst.BaseExpression | None:
    """What a handler catches, through a name bound once to a tuple of classes (`retryable =
    (litellm.Timeout, litellm.APIConnectionError)`, then `except retryable:`), in the handler's
    function or at module level; None for a bare `except:`."""
    caught = handler.type
    if isinstance(caught, cst.Name):
        bound = model.resolve(model.scope_of(handler), caught.value)
        if len(bound) == 1 and isinstance(bound[0].value, (cst.Tuple, cst.List)) and bound[0].kind == "assign":
            return bound[0].value
    return caught


def statuses_in(expr: cst.BaseExpression) -> tuple[int, ...]:
    """Non-retryable status codes named in an expression (`in (400, 404)`, `== 422`), in order."""
    found = set()
    for node in (expr, *iter_nodes(expr, stop_at_functions=False)):  # into lambda predicates
        if isinstance(node, cst.Integer):
            try:
                value = int(node.value)
            except ValueError:
                continue
            if value in NON_RETRYABLE_STATUSES:
                found.add(value)
    return tuple(sorted(found))


def status_literals(model: ModuleModel, expr: cst.BaseExpression) -> set[int]:
    """The integers an expression is, directly or through the names it was built from."""
    out = set()
    for node in origin_nodes(model, expr):
        if isinstance(node, cst.Integer):
            try:
                out.add(int(node.value))
            except ValueError:
                pass
    return out


def expr_nodes(expr: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield expr
    yield from iter_nodes(expr)


def is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) and float(expr.value.replace("_", "")) == 0
