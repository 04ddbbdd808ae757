"""How data-model findings (IDM101-IDM103) are weighed and worded: the confidence a file's role
or a record's origin lowers, the fix in the write's own library and SQL dialect, and the reports of
check-then-insert."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint.knowledge.orms import DJANGO, DJANGO_MODULES, SQLALCHEMY, SQLALCHEMY_MODULES
from idemlint.rule import Report

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db import DbRead, DbWrite
    from idemlint.analysis.db.races import Race
    from idemlint.analysis.summary_records import Chain
    from idemlint.context import FileContext

# where IDM101's read came from, for a record the function did not load itself
RECORD_ORIGINS = {
    "self": "the row this method runs on, as some caller loaded it",
    "parameter": "passed in, loaded by a caller",
    "loop variable": "from the loop, loaded before it",
    "helper result": "loaded by the helper that returned it",
    "held": "held by this object, loaded by whoever first used it",
}


def race_message(write: DbWrite, race: Race) -> str:
    """IDM101's message: a lost update, a decision on a record or on a read, or rows a state filter chose."""
    columns = ", ".join(race.columns) or "the row"
    read = race.read
    if race.computed:
        loaded = "a related row, loaded when first used on line $where," if read.record else "as loaded on line $where"
        return (
            f"{write.described()} builds on {read.instance}.{columns} {loaded} without a lock: two "
            "overlapping runs both read the old value and one change is lost"
        )
    if read.record:
        return (
            f"{write.described()} is decided by {read.instance}.{columns} ({RECORD_ORIGINS[read.record]}), "
            "tested on line $where on the in-memory instance without a lock, and the write does not re-check it"
        )
    if race.test is read.call:
        return (
            f"{write.described()} writes rows chosen by {columns} on line $where without a lock, and its filter "
            f"does not re-check {columns}: a row that changed meanwhile, or one an overlapping run took, is "
            "written again"
        )
    return (
        f"{write.described()} is decided by {columns} read on line $where without a lock, "
        "and the write does not re-check it"
    )


def arithmetic_hint(ctx: FileContext, write: DbWrite, column: str) -> str:
    """For a write that builds on the column's old value: let the database do the arithmetic."""
    if write.kind == SQLALCHEMY or writes_through_sqlalchemy(ctx):
        return (
            f"Let the database compute it: `update(Model).where(Model.id == id_).values({column}=Model.{column} + ...)` "
            "(with any limit in the `where`, branching on `.rowcount`); or `with_for_update()` on the read."
        )
    return (
        f'Let the database compute it: `Model.objects.filter(pk=pk).update({column}=F("{column}") + ...)` (with any '
        "limit in the filter, branching on the count); or `select_for_update()` the read in `transaction.atomic()`."
    )


def lower_confidence(ctx: FileContext, read: DbRead | None = None) -> str | None:
    """Lower than the rule's where harm is less likely: a management command or script (run by
    hand, one at a time), or a parameter, loop variable or record the object holds (the caller
    may hold a lock)."""
    if ctx.run_by_hand:
        return "low"
    return "low" if read is not None and read.record in ("parameter", "loop variable", "held") else None


def sql_placeholder(ctx: FileContext, write: DbWrite) -> str:
    """The SQL parameter style the write itself uses: `?` (sqlite3), `$1` (asyncpg), `%s`."""
    if write.kind != "sql" or write.call is None:
        return "%s"
    text = ctx.module.code_for_node(write.call)
    return "?" if "?" in text else "$1" if "$1" in text else ":id" if ":id" in text else "%s"


def condition_hint(ctx: FileContext, write: DbWrite, states: str, column: str = "status") -> str:
    """Where the precondition goes, in the write's own library, with the states the code read."""
    if write.kind == SQLALCHEMY or write.kind in ("attribute", "setter", "service") and writes_through_sqlalchemy(ctx):
        return (
            f"Put the precondition in the write and branch on `.rowcount`: `update(Model).where(Model.id == id_, "
            f"Model.{column}.in_([{states}])).values({column}=...)`; or `with_for_update()` on the read."
        )
    if write.kind in (DJANGO, "attribute", "setter", "service"):
        return (
            f"Put the precondition in the write and branch on its count: `Model.objects.filter(pk=pk, "
            f"{column}__in=[{states}]).update({column}=...)`; or `select_for_update()` the read in `transaction.atomic()`."
        )
    mark = sql_placeholder(ctx, write)
    return (
        f"Put the precondition in the write and branch on its row count: `UPDATE ... SET {column} = ... WHERE id = {mark} "
        f"AND {column} IN ({states})`; or lock the row for the read (`SELECT ... FOR UPDATE`)."
    )


def writes_through_sqlalchemy(ctx: FileContext) -> bool:
    """A module that imports SQLAlchemy (or Flask-SQLAlchemy, SQLModel) and not Django: its
    instances are written by a session's flush."""
    modules = ctx.model.imports.values()
    return any(SQLALCHEMY_MODULES.match(m) for m in modules) and not any(DJANGO_MODULES.match(m) for m in modules)


def spelt_state(kind: str, text: str) -> str:
    """A state as a message spells it: a constant as written, a literal quoted."""
    return text if kind == "constant" else repr(text)


ABSENCE_CHECK = "an absence check before an insert"


def absence_reports(ctx: FileContext) -> Iterator[Report]:
    """Check-then-insert: a query found no row and the function inserts one (see
    `analysis/db/absent_rows.py`). Low confidence until measured: whether a duplicate row
    does harm depends on what the row means."""
    from idemlint.analysis.db.absent_rows import absent_row_inserts, resolved
    from idemlint.analysis.summaries import related_steps

    related = ctx.project.related_managers

    def inserted_by(call: cst.Call, table: str) -> Chain | None:
        """The chain to the insert of a `table` row the called function makes; () when it makes one
        by another way than its first insert shows."""
        callee = ctx.callee(call)
        summary = callee.summary if callee is not None else None
        if summary is None or not summary.inserts_row:
            return None
        if resolved(summary.inserted_model, related) == table:
            return summary.inserts_row
        return () if any(resolved(m, related) == table for m in summary.inserted_models) else None

    for found in absent_row_inserts(ctx.model, ctx.db, ctx.project.unique_keys, inserted_by, related):
        columns = ", ".join(dict.fromkeys(p.column for p in found.read.filters))
        inserted = ctx.module.code_for_node(found.insert.func)
        callee = ctx.callee(found.insert) if found.chain is not None else None
        through = f" (through {' -> '.join(step.text for step in found.chain)})" if found.chain else ""
        yield Report(
            found.insert,
            f"{inserted}() inserts the {found.read.table} row{through} that the query on line $where found absent by "
            f"({columns}), with no lock and no unique key on those columns: two runs of the same request both "
            "find none and both insert",
            suggestion=(
                f"Add a unique constraint on ({columns}) and treat the IntegrityError as the duplicate (or use "
                "get_or_create() backed by it); or lock a parent row (`select_for_update()`) before the query."
            ),
            lines=(("where", found.read.call),),
            confidence="low",
            related=related_steps(callee, found.chain) if callee is not None and found.chain else (),
            evidence=ABSENCE_CHECK,
        )
