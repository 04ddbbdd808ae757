"""How data-model findings (IDM101-IDM103) are weighed and worded: the confidence a file's role
or a record's origin lowers, and the fix in the write's own library and SQL dialect."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint.knowledge.orms import DJANGO, DJANGO_MODULES, SQLALCHEMY, SQLALCHEMY_MODULES

if TYPE_CHECKING:
    from idemlint.analysis.db import DbRead, DbWrite
    from idemlint.context import FileContext


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
