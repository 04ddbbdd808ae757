"""The rows a query's write draws from an earlier read of the same table (`ids = X.objects.filter(
status=S).values_list("pk")`, then `X.objects.filter(id__in=ids).update(...)`): unlocked, IDM101's
race; locked in a transaction still open, IDM103's precondition."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import chain_calls
from idemlint.analysis.db.decisions import same_record
from idemlint.analysis.db.locks import ended_between
from idemlint.analysis.db.object_records import transaction_block
from idemlint.analysis.db.records import DbRead, DbWrite
from idemlint.analysis.db.scopes import source_order
from idemlint.analysis.flow import origin_nodes, runs_before
from idemlint.analysis.model import ModuleModel
from idemlint.knowledge.locks import names_a_transaction
from idemlint.knowledge.orms import DJANGO, SQLALCHEMY

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db.classify import DbAnalysis
else:
    cst = LazyModule("libcst", globals(), "cst")


def reads_choosing_the_rows(model: ModuleModel, db: DbAnalysis, write: DbWrite) -> Iterator[DbRead]:
    """The earlier queries of the same table, in the write's function, that the rows a query's
    write names are drawn from (`ids = X.objects.filter(...).values_list("pk")`, then
    `X.objects.filter(id__in=ids).update(...)`)."""
    if write.kind not in (DJANGO, "sql", SQLALCHEMY):
        return
    scope = model.scope_of(write.node)
    position = source_order(model, scope)
    chosen_by = {id(n) for n in _write_inputs(model, write)}
    for read in db.reads:
        if read.record or model.scope_of(read.call) is not scope or not same_record(read, write):
            continue
        if position.get(read.call, 0) >= position.get(write.node, 0):
            continue
        if id(read.call) in chosen_by and not another_instance(model, read, write):
            yield read


def chosen_under_a_lock(model: ModuleModel, db: DbAnalysis, write: DbWrite, column: str) -> bool:
    """The write's rows were chosen by a query that locked them and named the states it takes
    (`list(X.objects.select_for_update().filter(status=AVAILABLE))`, then `filter(id__in=ids).update(
    status=PAID_OUT)`), in a transaction still open at the write: they stay in those states."""
    return any(
        read.locked
        and any(p.column == column and p.op in ("eq", "in") for p in read.filters)
        and not _QUERIED_LOOSELY.search(model.module.code_for_node(read.call))
        and _held_at(model, read, write.node)
        for read in reads_choosing_the_rows(model, db, write)
    )


# `exclude(...)`, `Q(...)` objects or-ed, a lock that lets others on: the states named are not all it takes
_QUERIED_LOOSELY = re.compile(r"\.exclude\(|\bQ\(|skip_locked|nowait|no_key|of=")


def _held_at(model: ModuleModel, read: DbRead, node: cst.CSTNode) -> bool:
    """The read's row lock is still held at `node`: the transaction it was taken in (a `with`
    naming one, or else a decorator of the function) holds `node` too, and nothing ends it first."""
    if not runs_before(model, read.call, node):
        return False
    block = transaction_block(model, read.call)
    if block is not None:
        held = model.is_inside(node, block.body)
    else:
        function = model.enclosing_function(read.call)
        held = function is not None and any(
            names_a_transaction(model.module.code_for_node(d.decorator)) for d in function.decorators
        )
    return held and not ended_between(model, read.call, (node,))


def _write_inputs(model: ModuleModel, write: DbWrite) -> list[cst.CSTNode]:
    """Every node the write's filter arguments are computed from."""
    if write.call is None:
        return []
    found: list[cst.CSTNode] = []
    for link in chain_calls(write.call):
        for arg in link.args:
            found.extend(origin_nodes(model, arg.value))
    return found


def another_instance(model: ModuleModel, read: DbRead, write: DbWrite) -> bool:
    """An update by primary key of another instance than the one read (`original =
    ....first()`, then `filter(id=duplicate.id).update(...)`): the same table, another row."""
    if write.kind != DJANGO or write.call is None or read.instance is None:
        return False
    for node in model.iter_nodes(write.call):
        if (
            type(node) is cst.Arg
            and node.keyword is not None
            and node.keyword.value in ("pk", "id")
            and type(node.value) is cst.Attribute
            and node.value.attr.value in ("pk", "id")
            and type(node.value.value) is cst.Name
        ):
            return node.value.value.value != read.instance
    return False
