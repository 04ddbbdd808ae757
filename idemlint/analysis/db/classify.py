"""`DbAnalysis`: every call of a file classified as a database read or write.

DB-API SQL text (parsed by `analysis.sql`), Django querysets and managers, SQLAlchemy
`update()`/`select()`/`Query`, state setters and instance assignments (`instances`); with
the row-count question (`rowcount`) answered for each write, and the predicates the rules
ask of a write's WHERE/filter.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import (
    assigned_name,
    chain_calls,
    chain_model,
    django_predicates,
    full_chain,
    is_queryset,
    kwarg_predicates,
    locks,
    model_name,
    python_value_kind,
    values_sets,
)
from idemlint.analysis.db.instances import attribute_writes, record_reads, related_reads
from idemlint.analysis.db.records import (
    ASYNCPG_FETCH,
    CURSOR_FETCH,
    DJANGO_CHAIN,
    DJANGO_READ_TERMINALS,
    EXECUTE_METHODS,
    IDENTITY,
    SA_READ_TERMINALS,
    SESSION,
    VERSION_COLUMNS,
    DbRead,
    DbWrite,
)
from idemlint.analysis.db.related_managers import related_manager
from idemlint.analysis.db.rowcount import executor_of, result_used, rowcount_read_after
from idemlint.analysis.db.sa_filters import flask_query_model, sa_filters, with_statement
from idemlint.analysis.db.setter_calls import setter_write
from idemlint.analysis.model import ModuleModel, keyword
from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.analysis.sql import Predicate, classify, sql_text
from idemlint.knowledge.orms import DJANGO, GET_OR_404, SQLALCHEMY
from idemlint.knowledge.repeats import ACTING_WORDS, words_of

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.config import Config
else:
    cst = LazyModule("libcst", globals(), "cst")


_FLASK_TERMINALS = frozenset({"get", "get_or_404", "first_or_404", "one_or_404"})


class DbAnalysis:
    def __init__(
        self,
        model: ModuleModel,
        config: Config,
        project: ProjectIndex = EMPTY,
        state_written_by: Callable[[cst.Call], tuple[str, str, str, str, bool] | None] | None = None,
    ) -> None:
        """`state_written_by(call)`: the (instance, column, value kind, text, judged in the
        function) a called function sets on its own instance or on the one it is given (from
        its summary), so `order.ship()` and `mark_shipped(order)` write `order.status`."""
        self.model = model
        self.project = project
        self._state_written_by = state_written_by
        self.state_columns = model.vocabulary.state_columns
        self.reads: list[DbRead] = []
        self.writes: list[DbWrite] = []
        self._selected: dict[tuple[cst.CSTNode, str], DbRead] = {}  # (scope, cursor) -> SELECT
        for call in model.calls:
            self._classify_call(call)
        self.reads.extend(record_reads(model, self.reads, self.writes, project.locked_row_returners))
        self.reads.extend(related_reads(model, self.reads))
        self.writes.extend(attribute_writes(model, self.reads, self.writes, project))

    # -- classification --------------------------------------------------------------------

    def _classify_call(self, call: cst.Call) -> None:
        model = self.model
        func = call.func
        if not isinstance(func, cst.Attribute):
            if model.call_name(call) in GET_OR_404 and call.args:
                filters = tuple(kwarg_predicates(model, call))  # `get_object_or_404(Order, pk=pk, state=PAID)`
                # or a queryset: `get_object_or_404(Order.objects.select_for_update(), ...)`
                source = call.args[0].value
                self.reads.append(
                    DbRead(
                        call,
                        model_name(model, source),
                        isinstance(source, cst.Call) and locks(chain_calls(source)),
                        tuple(p.column for p in filters),
                        assigned_name(model, call),
                        filters,
                    )
                )
            else:
                self._state_setter_call(call)
            return
        method = func.attr.value
        if model.vocabulary.is_state_setter(method) and method not in self.project.stateless_setters:
            write = setter_write(model, call, method, self.state_columns, self.project.guarded_setters)
            if write is not None:
                self.writes.append(write)
                return
        if method in EXECUTE_METHODS | ASYNCPG_FETCH and call.args:
            self._sql_call(call, method)
        elif method == "update" and is_queryset(model, func.value):
            self._django_update(call)
        elif method in ("update", "values", "where") and self._sqlalchemy_update(call):
            pass
        elif method in DJANGO_READ_TERMINALS and is_queryset(model, func.value, allow_manager=True):
            self._django_read(call)
        elif method in DJANGO_CHAIN and _evaluated(model, call) and is_queryset(model, call):
            self._django_read(call)  # Order.objects.filter(...)[0], list(Order.objects.select_for_update()...)
        elif method in SA_READ_TERMINALS | _FLASK_TERMINALS and self._sqlalchemy_read(call):
            pass
        elif method in DJANGO_READ_TERMINALS and (
            related := related_manager(model, call, self.project.related_managers)
        ):
            self._django_read(call, related)  # `run.executions.filter(case=case).exists()`
        elif _custom_manager_read(model, call, method):
            self._django_read(call)  # `Order.objects.get_by_reference_number(ref)`
        elif method in CURSOR_FETCH and isinstance(func.value, (cst.Name, cst.Attribute)):
            key = (model.scope_of(call), model.dotted(func.value) or "")
            selected = self._selected.get(key)
            if selected is not None:
                self.reads.append(DbRead(call, selected.table, selected.locked, selected.columns))
        else:
            self._state_setter_call(call)

    def _state_setter_call(self, call: cst.Call) -> None:
        """`order.ship()`, `mark_sending(notification)`: a project function that sets the
        state of its own instance or of the one it is given, and saves it."""
        written = self._state_written_by(call) if self._state_written_by is not None else None
        if written is None:
            return
        instance, column, kind, text, in_function = written
        statement = self.model.statement_of(call)
        self.writes.append(
            DbWrite(
                call,
                statement,
                "setter",
                None,
                {column: (kind, text)},
                (),
                True,
                instance,
                call=call,
                judged_in_method=in_function,
            )
        )

    def _django_read(self, call: cst.Call, related: tuple[str, frozenset[str]] | None = None) -> None:
        """A queryset read; through a reverse manager (`related`: its model and key columns), the
        chain ends at the manager, and the key binding the instance is one more filter."""
        model = self.model
        chain = full_chain(model, call) if related is None else chain_calls(call)
        filters = tuple(django_predicates(model, chain))
        if related is not None:
            filters += tuple(Predicate(column, "eq", "param") for column in sorted(related[1]))
        self.reads.append(
            DbRead(
                call,
                chain_model(model, chain) if related is None else related[0],
                locks(chain),
                tuple(p.column for p in filters),
                assigned_name(model, call),
                filters,
            )
        )

    def _sql_call(self, call: cst.Call, method: str) -> None:
        model = self.model
        text = sql_text(model, call.args[0].value)
        if text is None:
            return
        statement = classify(text)
        if statement is None:
            return
        receiver = model.dotted(call.func.value) or ""  # type: ignore[attr-defined]
        if statement.kind == "select":
            read = DbRead(call, statement.table, statement.locks, statement.columns)
            self._selected[(model.scope_of(call), receiver)] = read
            parent = model.parents.get(call)
            if method in ASYNCPG_FETCH or isinstance(parent, cst.Attribute) or isinstance(parent, cst.Await):
                self.reads.append(read)  # asyncpg fetch*, or conn.execute(...).fetchone()
        elif statement.kind == "update":
            count_read = statement.returning or result_used(model, call) or rowcount_read_after(model, call, receiver)
            self.writes.append(
                DbWrite(
                    call,
                    model.statement_of(call),
                    "sql",
                    statement.table,
                    {c: (k, t) for c, k, t in statement.sets},
                    statement.where,
                    count_read,
                    call=call,
                )
            )

    def _django_update(self, call: cst.Call) -> None:
        model = self.model
        chain = full_chain(model, call.func.value)  # type: ignore[attr-defined]
        sets, values = {}, {}
        for arg in call.args:
            if arg.keyword is not None:
                sets[arg.keyword.value.lower()] = python_value_kind(model, arg.value)
                values[arg.keyword.value.lower()] = arg.value
        where = tuple(django_predicates(model, chain))
        self.writes.append(
            DbWrite(
                call,
                model.statement_of(call),
                DJANGO,
                chain_model(model, chain),
                sets,
                where,
                result_used(model, call),
                call=call,
                values=values,
            )
        )

    def _sqlalchemy_update(self, call: cst.Call) -> bool:
        """`update(Order).where(...).values(...)` (executed) or `query(Order).filter(...).update({...})`."""
        model = self.model
        chain = chain_calls(call)
        names = [model.call_name(c) or "" for c in chain]
        root = chain[-1] if chain else None
        method = call.func.attr.value  # type: ignore[attr-defined]
        root_name = (model.call_name(root) or "") if root is not None else ""
        if root is not None and root_name.startswith(SQLALCHEMY) and root_name.endswith(".update"):
            parent = model.parents.get(call)
            if isinstance(parent, cst.Attribute):
                return True  # not the end of the chain: the outermost call is classified
            table = model_name(model, root.args[0].value) if root.args else None
            sets: dict[str, tuple[str, str]] = {}
            for link in chain:
                if isinstance(link.func, cst.Attribute) and link.func.attr.value == "values":
                    sets.update(values_sets(model, link))
            where = sa_filters(model, chain)
            executed = executor_of(model, call)
            node = executed or call
            count_read = result_used(model, executed) if executed is not None else False
            self.writes.append(
                DbWrite(node, model.statement_of(node), SQLALCHEMY, table, sets, tuple(where), count_read, call=node)
            )
            return True
        if method == "update" and any(n.endswith(".query") or n == "query" or n.endswith("query") for n in names):
            query = next(c for c in reversed(chain) if (model.call_name(c) or "").endswith("query"))
            table = model_name(model, query.args[0].value) if query.args else None
            where = sa_filters(model, chain)
            sets = values_sets(model, call)
            self.writes.append(
                DbWrite(
                    call,
                    model.statement_of(call),
                    SQLALCHEMY,
                    table,
                    sets,
                    tuple(where),
                    result_used(model, call),
                    call=call,
                )
            )
            return True
        return False

    def _sqlalchemy_read(self, call: cst.Call) -> bool:
        model = self.model
        func = call.func
        assert isinstance(func, cst.Attribute)
        method = func.attr.value
        receiver = model.dotted(func.value) or ""
        if method == "get" and SESSION.search(receiver) and call.args:
            locked = keyword(call, "with_for_update") is not None
            self.reads.append(
                DbRead(call, model_name(model, call.args[0].value), locked, (), assigned_name(model, call))
            )
            return True
        # `result = await session.execute(stmt)`, then `result.scalar_one()`; the statement followed,
        # also through a name (`stmt = select(...).with_for_update()`)
        chain = with_statement(model, full_chain(model, call))
        for link in chain:
            name = model.call_name(link) or ""
            if (
                name.endswith(("query", "select"))
                and link.args
                and (method in SA_READ_TERMINALS or method == "scalars")
            ):
                locked = any(
                    isinstance(c.func, cst.Attribute) and c.func.attr.value == "with_for_update" for c in chain
                )
                filters = tuple(sa_filters(model, chain))
                table = model_name(model, link.args[0].value)
                columns = tuple(p.column for p in filters)
                self.reads.append(DbRead(call, table, locked, columns, assigned_name(model, call), filters))
                return True
        return self._flask_query_read(call, method, chain)

    def _flask_query_read(self, call: cst.Call, method: str, chain: list[cst.Call]) -> bool:
        """Flask-SQLAlchemy's `Order.query.filter_by(id=i).first()`, `Order.query.get(i)`."""
        if method not in SA_READ_TERMINALS | _FLASK_TERMINALS:
            return False
        model = self.model
        table = flask_query_model(chain or [call])
        if table is None:
            return False
        filters = tuple(sa_filters(model, chain))
        locked = any(isinstance(c.func, cst.Attribute) and c.func.attr.value == "with_for_update" for c in chain)
        self.reads.append(
            DbRead(
                call,
                table,
                locked,
                tuple(p.column for p in filters),
                assigned_name(model, call),
                filters,
            )
        )
        return True

    # -- helpers for rules --------------------------------------------------------------------------

    def is_state_column(self, column: str) -> bool:
        return self.model.vocabulary.is_state_column(column)

    def is_condition(self, predicate: Predicate) -> bool:
        """A predicate that constrains more than the row's identity: a state, version,
        flag, null-check or range on a column of this row."""
        column = predicate.column.split(".")[-1]
        if "__" in column or IDENTITY.search(column) and not self.is_state_column(column):
            return False
        if self.is_state_column(column) or VERSION_COLUMNS.match(column):
            return True
        return predicate.value in ("bool", "null") or predicate.op in ("is", "lt", "gt")

    def is_identity(self, predicate: Predicate) -> bool:
        """`id = %s`, `pk=pk`, `code=code`: the write targets the rows the caller names,
        not a set chosen by literals (a bulk backfill)."""
        column = predicate.column.split(".")[-1]
        if "__" in column or predicate.op != "eq" or self.is_state_column(column):
            return False  # `pk__in=ids` is a bulk update: its count says little about duplicates
        return (
            bool(IDENTITY.search(column)) or predicate.value in ("param", "expr") and not VERSION_COLUMNS.match(column)
        )

    def is_guarded_write(self, write: DbWrite) -> bool:
        """A duplicate guard: particular rows, plus a condition on their state."""
        return any(self.is_identity(p) for p in write.where) and any(self.is_condition(p) for p in write.where)


_MANAGER_WRITES = frozenset(
    {
        "create",
        "acreate",
        "bulk_create",
        "bulk_update",
        "get_or_create",
        "update_or_create",
        "update",
        "delete",
        "aupdate",
        "adelete",
        "raw",
        "none",
        "using",
        "db_manager",
    }
)


def _evaluated(model: ModuleModel, call: cst.Call) -> bool:
    """A queryset taken apart where it is built: indexed (`qs[0]`), or listed where it locks the
    rows it lists (`list(qs.select_for_update())`: the lock is taken there)."""
    parent = model.parents.get(call)
    if isinstance(parent, cst.Subscript):
        return True
    holder = model.parents.get(parent) if isinstance(parent, cst.Arg) else None
    return (
        locks(chain_calls(call))
        and isinstance(holder, cst.Call)
        and isinstance(holder.func, cst.Name)
        and holder.func.value in ("list", "tuple", "sorted")
        and len(holder.args) == 1
    )


def _custom_manager_read(model: ModuleModel, call: cst.Call, method: str) -> bool:
    """A method of a model's manager, other than the writes, whose result is kept in a
    name: a custom lookup that loads one row (`Order.objects.get_by_reference_number(r)`); not
    one whose first word is an act (`User.objects.create_user(...)`, `Invoice.objects.add_line(...)`),
    which makes the row it gives back."""
    func = call.func
    if method in _MANAGER_WRITES or method in DJANGO_CHAIN or not isinstance(func, cst.Attribute):
        return False
    if not ACTING_WORDS.isdisjoint(words_of(method)[:1]):
        return False  # `create_user`, `add_line`: not `get_by_charge_id`, whose act is a noun
    owner = model.dotted(func.value) or ""
    head, _, manager = owner.rpartition(".")
    return manager == "objects" and head.rsplit(".", 1)[-1][:1].isupper() and assigned_name(model, call) is not None
