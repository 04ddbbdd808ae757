"""What a SQLAlchemy query filters on, read two ways.

`sa_filters` is what the statement tests, however (`filter(...)`, `where(...)`, `filter_by(...)`):
IDM101 asks whether a decision depends on a state, IDM102 whether a read turns a repeat away, and
for those `!=`, `.is_(None)` or `<` on the state count as much as `==`. `rows_chosen_by` is
narrower: the states the rows a query gives are in (IDM103's question for a loop over them), so
only `==` or `in_()` on a column of the model the query selects, alone or joined by `and_()` or
`&`; not an `or_()`, a `!=`, a subquery or another table's column.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import (
    full_chain,
    kwarg_predicates,
    model_name,
    predicate_value,
    python_value_kind,
    sa_predicates,
)
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.sql import Predicate
from idemlint.knowledge.orms import STATEMENT_RUNS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def sa_filters(model: ModuleModel, chain: list[cst.Call]) -> list[Predicate]:
    """Every test of a query chain: `filter(...)` / `where(...)` comparisons anywhere in their
    arguments, and `filter_by(...)` keywords (not after a `join()`: there they test the joined table)."""
    found: list[Predicate] = []
    for at, link in enumerate(chain):
        attr = link.func.attr.value if isinstance(link.func, cst.Attribute) else ""
        if attr in ("filter", "where"):
            found.extend(sa_predicates(model, link))
        elif attr == "filter_by" and not _after_a_join(chain, at):
            found.extend(kwarg_predicates(model, link))
    return found


def selected_model(model: ModuleModel, chain: list[cst.Call]) -> str | None:
    """The model a SQLAlchemy query chain selects (`session.query(Order)`, `select(Order)`,
    `Order.query`), lower-cased; None for a chain that is no such query."""
    root = next((link for link in reversed(chain) if (model.call_name(link) or "").endswith(("query", "select"))), None)
    selected = model_name(model, root.args[0].value) if root is not None and root.args else None
    return selected or flask_query_model(chain)


def rows_chosen_by(model: ModuleModel, chain: list[cst.Call]) -> list[Predicate]:
    """The values the rows of a query chain are in: `filter_by(status="pending")` (not after a
    `join()`), and `==` or `.in_(...)` on a column of the model the query selects."""
    selected = selected_model(model, chain)
    found: list[Predicate] = []
    for at, link in enumerate(chain):
        attr = link.func.attr.value if isinstance(link.func, cst.Attribute) else ""
        if attr == "filter_by" and not _after_a_join(chain, at):
            found.extend(kwarg_predicates(model, link))
        elif attr in ("filter", "where") and selected is not None:
            found.extend(_own_choices(model, [a.value for a in link.args if a.keyword is None], selected))
    return found


def _after_a_join(chain: list[cst.Call], at: int) -> bool:
    return any(
        isinstance(c.func, cst.Attribute) and c.func.attr.value in ("join", "outerjoin") for c in chain[at + 1 :]
    )


def _own_choices(model: ModuleModel, tests: list[cst.BaseExpression], selected: str) -> list[Predicate]:
    """`Order.status == "x"`, `Order.status.in_([...])`, and those inside `and_(...)` or `a & b`."""
    found: list[Predicate] = []
    for test in tests:
        if isinstance(test, cst.BinaryOperation) and isinstance(test.operator, cst.BitAnd):
            found.extend(_own_choices(model, [test.left, test.right], selected))
        elif isinstance(test, cst.Call) and (model.call_name(test) or "").rsplit(".", 1)[-1] == "and_":
            found.extend(_own_choices(model, [a.value for a in test.args], selected))
        elif isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
            target = test.comparisons[0]
            column = model.dotted(test.left) or ""
            if isinstance(target.operator, cst.Equal) and _own_column(model, test.left, column, selected):
                kind = python_value_kind(model, target.comparator)[0]
                found.append(Predicate(column.rsplit(".", 1)[-1].lower(), "eq", predicate_value(kind)))
        elif isinstance(test, cst.Call) and isinstance(test.func, cst.Attribute) and test.func.attr.value == "in_":
            column = model.dotted(test.func.value) or ""
            if _own_column(model, test.func.value, column, selected):
                found.append(Predicate(column.rsplit(".", 1)[-1].lower(), "in", "literal"))
    return found


def _own_column(model: ModuleModel, expr: cst.BaseExpression, column: str, selected: str) -> bool:
    return "." in column and model_name(model, expr) == selected


def flask_query_model(chain: list[cst.Call]) -> str | None:
    """Flask-SQLAlchemy's `Order.query.filter_by(...)`: the model the query hangs from (lower-cased)."""
    if not chain:
        return None
    node: cst.BaseExpression = chain[-1].func
    while isinstance(node, cst.Attribute) and node.attr.value != "query":
        node = node.value.func if isinstance(node.value, cst.Call) else node.value
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and node.value.value[:1].isupper():
        return node.value.value.lower()
    return None


def with_statement(model: ModuleModel, chain: list[cst.Call]) -> list[cst.Call]:
    """A chain and the `select(...)` statement it runs: `session.scalars(select(Order).where(...))`,
    `session.execute(stmt)`, SQLModel's `session.exec(...)` (also through a name bound to it)."""
    found = list(chain)
    for link in chain:
        if isinstance(link.func, cst.Attribute) and link.func.attr.value in STATEMENT_RUNS and link.args:
            inner = full_chain(model, link.args[0].value)
            if inner and (model.call_name(inner[-1]) or "").endswith("select"):
                found.extend(inner)
    return found
