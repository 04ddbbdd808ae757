"""Functions that return a row they loaded under a row lock, as stdlib `ast` reads them
(`def _get_for_update(cls, ref): return Intent.objects.select_for_update().get(ref=ref)`),
found per file and joined over the project. A caller's record from such a function was read
under the lock: a test of it, and the write after, hold the row as if the caller had locked it
(unless the caller commits between). Not where the function opens its own transaction around
the load (`with transaction.atomic(): return ...`): the lock ends with it when no caller's
transaction is open."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from idemlint.analysis.chosen_rows import called_name, own_nodes, returned_rows
from idemlint.knowledge.locks import LOCKING_KEYWORDS, ROW_LOCK_METHODS
from idemlint.knowledge.orms import GET_OR_404

_SHORTCUTS = frozenset(name.rsplit(".", 1)[-1] for name in GET_OR_404)

# per definition: (its name, the functions whose rows it returns in turn: empty where it loads them itself)
LockedReturns = tuple[tuple[str, tuple[str, ...]], ...]


def returns_locked_rows(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | None:
    """Whether every value the function returns is a row it loaded under a row lock (a query
    with `select_for_update()`, a load with `for_update=True`, directly or through a name bound
    once to one) or what another function returns (those functions' names); None when some
    return is anything else, sits in a transaction the function opens, or there is none."""
    bound: dict[str, list[ast.expr]] = {}
    for node in own_nodes(function):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, []).append(node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr)):
            for name in _stored_names(node):
                bound.setdefault(name, []).append(ast.Constant(None))  # bound again: anything

    def resolve(value: ast.expr) -> ast.expr:
        if isinstance(value, ast.Name) and len(bound.get(value.id, ())) == 1:
            value = bound[value.id][0]
        return value.value if isinstance(value, ast.Await) else value

    return returned_rows(function, loads_locked, resolve, lambda node: _in_own_transaction(function, node))


def loads_locked(call: ast.Call) -> bool:
    """`X.objects.select_for_update().get(...)`, `session.query(X).with_for_update().one()`,
    `get_object_or_404(X.objects.select_for_update(), ...)`, `frappe.get_doc(..., for_update=
    True)`: a load that locks what it gives (with `skip_locked=True` a racing run skips the row);
    not a shared lock (`with_for_update(read=True)`), which lets a racing run read it too."""
    if any(k.arg in LOCKING_KEYWORDS and not _false(k.value) for k in call.keywords):
        return True
    if called_name(call) in _SHORTCUTS and call.args and isinstance(call.args[0], ast.Call):
        return loads_locked(call.args[0])
    link: ast.expr = call
    while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
        if link.func.attr in ROW_LOCK_METHODS:
            return not any(k.arg == "read" and not _false(k.value) for k in link.keywords)
        link = link.func.value
    return False


def _false(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and value.value in (False, None)


def _stored_names(node: ast.AST) -> list[str]:
    targets: list[ast.expr] = []
    if isinstance(node, (ast.For, ast.AsyncFor)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    elif isinstance(node, ast.NamedExpr):
        targets = [node.target]
    return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]


def _in_own_transaction(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST) -> bool:
    """The return sits in a `with transaction.atomic():` (or any `with` naming a transaction)
    the function opens: the lock may end as the block does."""
    for statement in own_nodes(function):
        if isinstance(statement, (ast.With, ast.AsyncWith)) and any(
            _names_a_transaction(item.context_expr) for item in statement.items
        ):
            if any(inner is node for inner in ast.walk(statement)):
                return True
    return False


def _names_a_transaction(expr: ast.expr) -> bool:
    text = ast.unparse(expr.func if isinstance(expr, ast.Call) else expr).lower()
    return "atomic" in text or "transaction" in text or text.endswith(".begin")


def locked_row_returners(files: Iterable[LockedReturns], definitions: dict[str, int]) -> frozenset[str]:
    """The function names every definition of which returns a row it loaded under a row lock,
    or what such a function returns (`return self._get_for_update(ref)`)."""
    returning: dict[str, list[tuple[str, ...]]] = {}
    for returns in files:
        for name, through in returns:
            returning.setdefault(name, []).append(through)
    found: set[str] = set()
    while True:
        more = {
            name
            for name, each in returning.items()
            if name not in found
            and len(each) == definitions.get(name, 0)
            and all(set(through) <= found for through in each)
        }
        if not more:
            return frozenset(found)
        found |= more
