"""What every library module reads the same way: catch-all exceptions, non-retryable
statuses, and literal values (`None`, `False`, `0`)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, TypeGuard

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import origin_nodes, runs_before
from idemlint.analysis.model import ModuleModel, iter_nodes, string_value
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.http import (
    HTTP_STATUS_ERRORS,
    LOST_RACE_STATUSES,
    RAISE_ON_STATUS,
    RAISES_STATUS_ERROR,
    STATUS_FIELDS,
    URLLIB_STATUS_ERRORS,
)
from idemlint.knowledge.retries import CATCH_ALL, LOCAL_DATABASE_MODULES

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

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


def status_error_caught(model: ModuleModel, handler: cst.ExceptHandler) -> str | None:
    """The HTTP status error class a handler names (`except (httpx.ConnectError,
    httpx.HTTPStatusError):`), where the `try` it ends calls what raises that class
    (`raise_for_status()`; `urlopen()` for `urllib.error.HTTPError`, which it raises itself) and the handler
    looks at no status: a 404 or a 422 is caught, and so retried, as a 503 is. Not a base it is
    caught as (`except requests.RequestException:`), which says "any failed request" (a health
    wait, a transport error) more often than "this answer"."""
    elements = caught_classes(caught_expression(model, handler))
    named = next((q for e in elements if (q := model.qualname(e) or "") in HTTP_STATUS_ERRORS), None)
    attempt = model.parents.get(handler)
    if named is None or not isinstance(attempt, cst.Try):
        return None
    by_urllib = named in URLLIB_STATUS_ERRORS
    raises = any(
        type(n) is cst.Call
        and (
            (model.qualname(n.func) or "") in RAISE_ON_STATUS
            if by_urllib
            else type(n.func) is cst.Attribute and n.func.attr.value == RAISES_STATUS_ERROR
        )
        for n in model.iter_nodes(attempt.body)
    )
    looks = any(isinstance(n, cst.If) and is_status_test(model, n.test) for n in model.iter_nodes(handler.body))
    sorted_first = any(  # `if 400 <= r.status_code < 500: raise Permanent(...)` before it: no 4xx gets there
        isinstance(n, cst.If) and _names_client_errors(n.test) and _leaves(n) for n in model.iter_nodes(attempt.body)
    )
    return named if raises and not looks and not sorted_first else None


def _names_client_errors(test: cst.BaseExpression) -> bool:
    """A test that holds for 4xx statuses: it names them (`in (400, 404)`), or bounds the status
    so that 400-499 pass (`400 <= s < 500`, `s < 500`, `s >= 400`); not `s >= 500` or `== 503`."""
    if statuses_in(test):
        return True
    lower, upper = -1, 10_000
    bounded = False
    for comparison in (n for n in (test, *iter_nodes(test)) if isinstance(n, cst.Comparison)):
        sides = [comparison.left, *(c.comparator for c in comparison.comparisons)]
        for at, target in enumerate(comparison.comparisons):
            left, right, operator = sides[at], sides[at + 1], type(target.operator).__name__
            if isinstance(right, cst.Integer):
                number = int(right.value)
            elif isinstance(left, cst.Integer):  # `400 <= s` is `s >= 400`
                number, operator = int(left.value), _MIRRORED.get(operator, operator)
            else:
                continue
            if operator in ("GreaterThan", "GreaterThanEqual", "Equal"):
                lower, bounded = max(lower, number + (operator == "GreaterThan")), True
            if operator in ("LessThan", "LessThanEqual", "Equal"):
                upper, bounded = min(upper, number - (operator == "LessThan")), True
    return bounded and lower <= 499 and upper >= 400


_MIRRORED = {
    "LessThan": "GreaterThan",
    "LessThanEqual": "GreaterThanEqual",
    "GreaterThan": "LessThan",
    "GreaterThanEqual": "LessThanEqual",
}


def _leaves(branch: cst.If) -> bool:
    return any(isinstance(n, (cst.Raise, cst.Return)) for n in iter_nodes(branch.body))


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


def is_status_test(model: ModuleModel, test: cst.BaseExpression) -> bool:
    """A test that reads a status (`r.status_code`, `exc.status`, `status`)."""
    return (
        any(
            isinstance(n, (cst.Name, cst.Attribute)) and re.search(r"status", model.dotted(n) or "", re.IGNORECASE)
            for n in model.iter_nodes(test)
        )
        or isinstance(test, (cst.Name, cst.Attribute))
        and "status" in (model.dotted(test) or "")
    )


def tests_only_a_status(test: cst.BaseExpression) -> bool:
    """`exc.status == 401`, `r.status_code in (500, 503)`: a test of what an answer says against
    HTTP statuses, nothing else (no count, no clock). It may decide whether to go round; it
    bounds nothing, and a loop that makes it talks to another service."""
    if not isinstance(test, cst.Comparison):
        return False
    operands = [test.left, *(c.comparator for c in test.comparisons)]
    named = [o for o in operands if isinstance(o, (cst.Name, cst.Attribute))]
    if len(named) != 1:
        return False
    last = named[0].attr.value if isinstance(named[0], cst.Attribute) else named[0].value
    others = [o for o in operands if o is not named[0]]
    if any(isinstance(n, cst.Integer) and n.value in LOST_RACE_STATUSES for o in others for n in (o, *iter_nodes(o))):
        return False  # `== 412`: another writer won; going round ends as the competition does
    return last.lower() in STATUS_FIELDS and all(_http_statuses(o) for o in others)


def _http_statuses(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return bool(expr.elements) and all(_http_statuses(e.value) for e in expr.elements)
    return isinstance(expr, cst.Integer) and expr.value.isdigit() and 100 <= int(expr.value) <= 599


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


def handler_around(model: ModuleModel, node: cst.CSTNode) -> cst.ExceptHandler | cst.ExceptStarHandler | None:
    """The innermost `except` (or `except*`) block `node` runs in, if any."""
    return next((a for a in model.ancestors(node) if isinstance(a, (cst.ExceptHandler, cst.ExceptStarHandler))), None)


def expr_nodes(expr: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield expr
    yield from iter_nodes(expr)


def is_task_retry(node: cst.CSTNode, model: ModuleModel) -> TypeGuard[cst.Call]:
    """A task's own `.retry(...)` (`raise self.retry(exc=exc)`, whatever the bound task is named)."""
    return isinstance(node, cst.Call) and (model.dotted(node.func) or "").endswith(".retry")


def is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) and float(expr.value.replace("_", "")) == 0


def spread_settings(model: ModuleModel, call: cst.Call) -> dict[str, cst.BaseExpression]:
    """The keywords a call takes through `**name`, where the name is bound once in the call's
    own scope (or at module level) to a dict literal (`retry_args = {"total": 3, methods_arg:
    {"POST"}}`, then `Retry(**retry_args)`) and the items set on it before the call
    (`retry_args["backoff_jitter"] = 0.5`). A key is a string, or a name every binding of which
    is a string (`methods_arg = "allowed_methods"`, or the older spelling on another branch).
    Nothing where the dict may hold more than that: a `**` inside it, a second `**` argument,
    a key that cannot be read, or any other use of the name (`retry_args.update(...)`, `del`,
    handed to a function)."""
    spreads = [a.value for a in call.args if a.star == "**"]
    if len(spreads) != 1 or not isinstance(spreads[0], cst.Name):
        return {}
    spread = spreads[0]
    scope = model.scope_of(call)
    bound = model.bindings_of(scope, spread.value)
    if not bound and model.enclosing_function(scope) is None:
        bound = model.bindings_of(model.module, spread.value)
    if len(bound) != 1 or bound[0].kind != "assign" or not isinstance(bound[0].value, cst.Dict):
        return {}
    home = model.scope_of(bound[0].statement)
    found: dict[str, cst.BaseExpression] = {}
    for element in bound[0].value.elements:
        if not isinstance(element, cst.DictElement):
            return {}  # `{**base, ...}`: what `base` holds is unknown
        keys = _key_texts(model, scope, element.key)
        if not keys:
            return {}
        for key in keys:
            found[key] = element.value
    subscripts: set[cst.CSTNode] = set()
    for target, value, _statement in model.subscript_assigns:
        if not (isinstance(target.value, cst.Name) and target.value.value == spread.value):
            continue
        if model.scope_of(target) is not home:
            continue
        subscripts.add(target.value)
        keys = (
            _key_texts(model, scope, target.slice[0].slice.value)
            if len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index)
            else []
        )
        if not keys or not runs_before(model, target, call):
            return {}  # a key unknown, or set after the call: the call may not see what it says
        for key in keys:
            found[key] = value
    known = {spread, *subscripts, *(t.target for t in getattr(bound[0].statement, "targets", ()))}
    if any(isinstance(n, cst.Name) and n.value == spread.value and n not in known for n in model.iter_nodes(home)):
        return {}  # the dict is used some other way: it may hold more, or less
    return found


def _key_texts(model: ModuleModel, scope: cst.CSTNode, key: cst.BaseExpression) -> list[str]:
    text = string_value(key)
    if text is not None:
        return [text]
    if not isinstance(key, cst.Name):
        return []
    values = [b.value for b in model.resolve(scope, key.value)]
    texts = [string_value(v) if v is not None else None for v in values]
    return [t for t in texts if t is not None] if values and None not in texts else []


def local_database_errors(model: ModuleModel, caught: cst.BaseExpression) -> bool:
    """`except sqlite3.OperationalError:` (or a tuple of such): errors of a database kept in a
    file on this machine, which no shared service raises."""
    classes = caught_classes(caught)
    return bool(classes) and all((model.qualname(e) or "").startswith(LOCAL_DATABASE_MODULES) for e in classes)
