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

from idemlint.analysis.chosen_rows import SHORTCUTS, called_name, returned_rows
from idemlint.analysis.handed_calls import bound_only_by
from idemlint.analysis.syntax import own_nodes, parameter_names
from idemlint.knowledge.locks import (
    ENDS_THE_TRANSACTION,
    LETS_OTHERS_ON,
    LOCKING_KEYWORDS,
    LOCKS_A_ROW,
    ROW_LOCK_METHODS,
    names_a_transaction,
)
from idemlint.knowledge.orms import ROW_FILTERS, ROW_QUERY_METHODS, STATEMENT_RUNS
from idemlint.knowledge.repeats import names_a_lookup, words_of

# per definition: (its name, the functions whose rows it returns in turn: empty where it loads them itself)
LockedReturns = tuple[tuple[str, tuple[str, ...]], ...]


def returns_locked_rows(function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, ...] | None:
    """Whether every value the function returns is a row it loaded under a row lock (a query
    with `select_for_update()`, a load with `for_update=True`, directly or through a name bound
    once to one, not a parameter) or what another function returns (those functions' names);
    None when some return is anything else, the lock may end in the function (a transaction
    it opens around the load or the return, `@transaction.atomic` on it), or there is none."""
    if any(_names_a_transaction(d) for d in function.decorator_list) or any(
        isinstance(n, ast.Call) and called_name(n) in ENDS_THE_TRANSACTION for n in own_nodes(function)
    ):
        return None  # its transaction, or its commit, ends the lock before the caller's test
    params = set(parameter_names(function))
    bound = {name: value for name, value in bound_only_by(function, lambda value: value).items() if name not in params}

    def resolve(value: ast.expr) -> ast.expr:
        if isinstance(value, ast.Name) and value.id in bound:
            value = bound[value.id]  # bound once, by a plain assignment: not a loop's, a `with`'s, a walrus's
        return value.value if isinstance(value, ast.Await) else value

    def ends_here(node: ast.Return) -> bool:
        return (
            _in_own_transaction(function, node)
            or node.value is not None
            and _in_own_transaction(function, resolve(node.value))
        )

    return returned_rows(function, loads_locked, resolve, ends_here)


def loads_locked(call: ast.Call) -> bool:
    """`X.objects.select_for_update().get(...)`, `session.query(X).with_for_update().one()`,
    `get_object_or_404(X.objects.select_for_update(), ...)`, `frappe.get_doc(..., for_update=
    True)`, a getter handed a locked query (`get_table(pk, base_queryset=Table.objects.
    select_for_update())`, also under `cast(...)`): a load that locks what it gives (with `skip_locked=True` a racing run skips the row);
    not a shared lock (`with_for_update(read=True)`, `with_lockmode("read")`), which lets a
    racing run read it too, nor what a locked row's own method gives (`.get_parent()`)."""
    if any(k.arg in LOCKING_KEYWORDS and _true(k.value) for k in call.keywords):
        return True  # `for_update=True`; not `for_update=for_update`, which locks only when asked
    if called_name(call) in SHORTCUTS and call.args and isinstance(call.args[0], ast.Call):
        return loads_locked(call.args[0])
    if called_name(call) == "cast" and len(call.args) == 2 and isinstance(call.args[1], ast.Call):
        return loads_locked(call.args[1])  # `cast(TableForUpdate, ...)`: the value as it was
    if _a_getter(called_name(call)) and any(
        isinstance(given, ast.Call)
        and called_name(given) not in LOCKS_A_ROW | _ROW_TERMINALS  # a query handed over, not a row
        and loads_locked(given)
        for given in (*call.args, *(k.value for k in call.keywords))
    ):
        return True  # `get_table(pk, base_queryset=Table.objects.select_for_update())`: a row of the locked query
    link: ast.expr = call
    while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
        if link.func.attr in ROW_LOCK_METHODS:
            return not LETS_OTHERS_ON.search(ast.unparse(link))
        if link.func.attr in STATEMENT_RUNS and link.args and isinstance(link.args[0], ast.Call):
            return loads_locked(link.args[0])  # `(await db.execute(select(X).with_for_update())).scalars().first()`
        if link.func.attr not in ROW_QUERY_METHODS | ROW_FILTERS:
            return False  # a method of what the query gave, not the query
        link = link.func.value
        if isinstance(link, ast.Await):
            link = link.value
    return False


# what runs a query for one row (`first()`), besides what locks the row it finds (LOCKS_A_ROW)
_ROW_TERMINALS = frozenset({"first", "last", "one_or_none", "afirst", "alast", "scalar_one_or_none"})


def _a_getter(name: str) -> bool:
    """`get_table`, `load_account`, `_fetch_job`: a function named for giving back what it looks up."""
    words = words_of(name.lstrip("_"))
    return names_a_lookup(words) or words[:1] in (["load"], ["retrieve"])


def _true(value: ast.expr) -> bool:
    return isinstance(value, ast.Constant) and bool(value.value)


def _in_own_transaction(function: ast.FunctionDef | ast.AsyncFunctionDef, node: ast.AST) -> bool:
    """`node` sits in a `with transaction.atomic():` (or any `with` naming a transaction) the
    function opens: the lock may end as the block does."""
    return any(
        isinstance(statement, (ast.With, ast.AsyncWith))
        and any(_names_a_transaction(item.context_expr) for item in statement.items)
        and any(inner is node for inner in ast.walk(statement))
        for statement in own_nodes(function)
    )


def _names_a_transaction(expr: ast.expr) -> bool:
    return names_a_transaction(ast.unparse(expr.func if isinstance(expr, ast.Call) else expr))


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
