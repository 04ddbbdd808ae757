"""Rows a state filter chose, as stdlib `ast` reads them: a query that requires a state
(`Req.objects.filter(state=PENDING)`, `get_object_or_404(Req, pk=pk, status=...)`), and the
functions that return only such rows (`def get_active(self): return self.get(status__in=
[ISSUED, REINSTATED])`), found per file and joined over the project. A record they give is
found only in those states, which is a precondition for the state written to it next."""

from __future__ import annotations

import ast
from collections.abc import Callable

from idemlint.analysis.db.records import DJANGO_CHAIN
from idemlint.analysis.final_states import is_state_attribute
from idemlint.analysis.syntax import own_nodes
from idemlint.knowledge.orms import GET_OR_404, NOT_ROWS, ROW_FILTERS, ROW_QUERY_METHODS

SHORTCUTS = frozenset(name.rsplit(".", 1)[-1] for name in GET_OR_404)  # as a file may call them, unqualified
# query methods that give rows to iterate, not one row
_QUERYSETS = frozenset((DJANGO_CHAIN - NOT_ROWS) | {"none", "reverse"})


def chosen_row_returners(returning: dict[str, tuple[str, ...]], definitions: dict[str, int]) -> set[str]:
    """The functions that return only rows a state filter chose, directly or through another
    such function (`get_draft_or_active(app)` returns `get_draft(app)` or `get_active(app)`).
    Each must be defined once in the project: a name two classes define may return anything."""
    found: set[str] = set()
    while True:
        more = {
            name
            for name, through in returning.items()
            if name not in found and definitions.get(name) == 1 and set(through) <= found
        }
        if not more:
            return found
        found |= more


def returns_chosen_rows(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | None:
    """Whether every value the function returns is a row (or rows) a state filter chose
    (`return self.requests.get(status=NEEDS_REVIEW)`) or what another function returns
    (`return self.get_draft(app)`), those functions' names; None when some return is anything
    else, or there is none. A bare `return` or `return None` gives no row."""
    return returned_rows(function, query_chooses_state)


def returned_rows(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    gives: Callable[[ast.Call], bool],
    resolve: Callable[[ast.expr], ast.expr] = lambda value: value,
    refuse: Callable[[ast.Return], bool] = lambda node: False,
) -> tuple[str, ...] | None:
    """Whether every value the function returns (as `resolve` reads it: a name for what it was
    bound to) is a call `gives` accepts or what another function returns, those functions'
    names; None when some return is anything else or `refuse`d, or there is none."""
    through: list[str] = []
    returned = False
    for node in own_nodes(function):
        if not isinstance(node, ast.Return) or node.value is None:
            continue
        for value in _branches(resolve(node.value), resolve):
            if isinstance(value, ast.Constant) and value.value is None:
                continue
            if not isinstance(value, ast.Call) or called_name(value) in NOT_ROWS or refuse(node):
                return None
            copied = _copied_from(value)
            if gives(value) or copied is not None and _gives_resolved(copied, gives, resolve):
                returned = True
            elif isinstance(value.func, (ast.Name, ast.Attribute)) and called_name(value) not in ROW_QUERY_METHODS:
                through.append(called_name(value))
                returned = True
            else:
                return None
    return tuple(sorted(set(through))) if returned else None


def _branches(value: ast.expr, resolve: Callable[[ast.expr], ast.expr]) -> list[ast.expr]:
    """`Schema(...) if row else None`: each value a return may give."""
    if isinstance(value, ast.IfExp):
        return [resolve(value.body), resolve(value.orelse)]
    return [value]


def _copied_from(call: ast.Call) -> str | None:
    """`Transaction(id=row.id, status=row.status)`: a record a class builds of one row's columns
    only, the row's name (what was read into it was read as that row was)."""
    if not called_name(call)[:1].isupper():
        return None  # `load(row.partner_id)` loads another row; only a class builds a copy
    values = [*call.args, *(k.value for k in call.keywords)]
    owners = {v.value.id for v in values if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name)}
    if not values or len(owners) != 1 or not all(isinstance(v, ast.Attribute) for v in values):
        return None
    return owners.pop()


def _gives_resolved(name: str, gives: Callable[[ast.Call], bool], resolve: Callable[[ast.expr], ast.expr]) -> bool:
    value = resolve(ast.Name(id=name, ctx=ast.Load()))
    return isinstance(value, ast.Call) and gives(value)


def chosen_by_state(iterable: ast.expr) -> bool:
    """Rows a state filter chose: `.filter(state=PENDING)`, `state__in=[...]`, `.filter(Req.state
    == PENDING)`; not `state__isnull=False`, not `.exclude(state=DONE)`, which admit any other state."""
    return any(
        isinstance(node, ast.Call)
        and not (isinstance(node.func, ast.Attribute) and node.func.attr == "exclude")
        and _requires_a_state(node)
        for node in ast.walk(iterable)
    )


def query_chooses_state(call: ast.Call) -> bool:
    """A query whose own `filter()`/`get()` requires a state (`Request.objects.filter(
    state=PENDING).first()`, `.get(pk=pk, status__in=[...])`, `.filter(Req.state == PENDING)`,
    Django's `get_object_or_404(Req, pk=pk, state=PENDING)`): not a state given to another call
    (`render(..., {"rows": X.filter(state=A)})`, `Response(status=200)`)."""
    if called_name(call) in SHORTCUTS:
        return _requires_a_state(call)
    link: ast.expr = call
    while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
        if link.func.attr not in ROW_QUERY_METHODS | ROW_FILTERS:
            return False  # `....get(state=S).get_parent()`: what a row's method gives, in any state
        if link.func.attr in ROW_FILTERS and _requires_a_state(link):
            return True
        link = link.func.value
    return False


def _requires_a_state(query: ast.Call) -> bool:
    """`state=PENDING`, `status__in=[...]`, `Req.state == PENDING` among a query's arguments."""
    for keyword in query.keywords:
        column, _, lookup = (keyword.arg or "").partition("__")
        if is_state_attribute(column) and lookup in ("", "in", "exact"):
            return True
    return any(
        isinstance(arg, ast.Compare)
        and isinstance(arg.left, ast.Attribute)
        and is_state_attribute(arg.left.attr)
        and all(isinstance(op, (ast.Eq, ast.In)) for op in arg.ops)
        for arg in query.args
    )


def called_name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def record_class(value: ast.expr) -> str:
    """The model class of the record a value gives, where the value says it: Django's
    `get_object_or_404(Review, ...)`, a manager's row (`Review.objects.get(pk=pk)`,
    `Review.objects.pending_for(b)`; not a queryset, a count or a list), or a new instance
    (`Review(...)`, `Review.objects.create(...)`). '' where unknown."""
    if not isinstance(value, ast.Call):
        return ""
    if called_name(value) in SHORTCUTS and value.args:
        return _tail(value.args[0])
    if isinstance(value.func, ast.Name) and value.func.id[:1].isupper():
        return value.func.id  # `Review(...)`: a class called (a function would be lower-case)
    name = called_name(value)
    if name in NOT_ROWS or name in _QUERYSETS:
        return ""
    return _managed(value)


def rows_class(iterable: ast.expr) -> str:
    """The model class of the rows a loop is given (`for r in Review.objects.filter(...)`)."""
    if isinstance(iterable, ast.Call) and called_name(iterable) in _QUERYSETS:
        return _managed(iterable)
    return ""


def _managed(query: ast.Call) -> str:
    """`Review` of a query chain that starts at `Review.objects` (a method of the manager's own
    first: `Review.objects.pending_for(b)`); not of what a row's method gives
    (`Review.objects.get(pk=pk).get_parent()`)."""
    link: ast.expr = query
    while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
        inner = link.func.value
        if isinstance(inner, ast.Attribute) and inner.attr == "objects":
            return _tail(inner.value)
        if link.func.attr not in ROW_QUERY_METHODS:
            return ""
        link = inner
    return ""


def _tail(expr: ast.expr) -> str:
    """`Review` of `Review` or `models.Review`; '' for anything else."""
    if isinstance(expr, ast.Name):
        return expr.id
    return expr.attr if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) else ""
