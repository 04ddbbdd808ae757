"""Database reads and writes in one function, across DB-API, Django and SQLAlchemy.

A *write* is an UPDATE (SQL text, `QuerySet.update()`, SQLAlchemy `update()` or
`Query.update()`) or an attribute assignment on a loaded instance that a later
`save()`/`commit()`/`flush()` persists. For each write we record what it sets, what its
WHERE/filter constrains, and whether its row count is read. A *read* is a SELECT, an ORM
`get`/`first`/`[0]`/`exists()`, or `session.get`, with whether it locks the row.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.model import ModuleModel, iter_nodes, keyword, string_value
from idemlint.analysis.project import EMPTY, SETTER, ProjectIndex
from idemlint.analysis.retry import always_leaves
from idemlint.analysis.sql import Predicate, classify, sql_text

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.config import Config
else:
    cst = LazyModule("libcst", globals(), "cst")

EXECUTE_METHODS = {"execute", "executemany", "exec_driver_sql", "executescript"}
ASYNCPG_FETCH = {"fetch", "fetchrow", "fetchval"}
CURSOR_FETCH = {
    "fetchone",
    "fetchall",
    "fetchmany",
    "scalar",
    "scalar_one",
    "scalar_one_or_none",
    "first",
    "one",
    "one_or_none",
    "mappings",
    "scalars",
    "all",
}
DJANGO_READ_TERMINALS = {
    "get",
    "first",
    "last",
    "earliest",
    "latest",
    "exists",
    "count",
    "values_list",
    "values",
    "aget",
    "afirst",
    "alast",
    "aexists",
}
DJANGO_CHAIN = {
    "filter",
    "exclude",
    "all",
    "select_related",
    "prefetch_related",
    "only",
    "defer",
    "order_by",
    "select_for_update",
    "using",
    "annotate",
    "values",
    "values_list",
    "distinct",
}
SA_READ_TERMINALS = {"first", "one", "one_or_none", "scalar", "scalar_one", "scalar_one_or_none", "get", "all"}
STATE_COLUMNS = {"status", "state", "stage", "phase", "step"}
VERSION_COLUMNS = re.compile(
    r"^(version|revision|rev|seq|sequence|lock_version|etag|generation|updated_at|modified_at|row_version)$"
)
IDENTITY = re.compile(
    r"^(id|pk|uuid|guid|key|slug)$|_(id|pk|uuid|guid|ref|key|token|number|code|sku)$|^(tenant|owner|customer|user|account|merchant|org|organization|shop|store|site|channel)$"
)
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]+$")
_STATE_ENUM = re.compile(r"(Status|State|Stage|Phase|Choices)\.[A-Za-z_]\w*$")
_LOCK_WORDS = ("select_for_update", "with_for_update")
_SESSION = re.compile(r"(^|[._])(session|db|s)$")


@dataclass
class DbRead:
    # the call whose result carries the data (fetchone(), .get(), first()); for a record
    # (an instance the function did not load) the parameter, loop or helper call that binds it
    call: cst.CSTNode
    table: str | None  # lower-cased table or model name
    locked: bool
    columns: tuple[str, ...] = ()  # columns known to be read (SELECT list, filter kwargs)
    instance: str | None = None  # the variable holding a loaded ORM instance
    filters: tuple[Predicate, ...] = ()  # the ORM filter that chose the row(s), when known
    record: str = ""  # for records: "self", "parameter", "loop variable" or "helper result"


@dataclass
class DbWrite:
    node: cst.CSTNode  # report here: the execute/update call, or the attribute assignment
    statement: cst.CSTNode  # the statement holding it (IDM102/103 report its first line)
    kind: str  # sql, django, sqlalchemy, attribute
    table: str | None
    sets: dict[str, tuple[str, str]] = field(default_factory=dict)  # column -> (value kind, text)
    where: tuple[Predicate, ...] = ()
    count_read: bool = True
    instance: str | None = None  # attribute writes: the instance variable
    call: cst.Call | None = None
    values: dict[str, cst.BaseExpression] = field(default_factory=dict)  # column -> the value's expression
    # a setter that, by every definition in the project, checks the current state first
    guarded: bool = False


class DbAnalysis:
    def __init__(self, model: ModuleModel, config: Config, project: ProjectIndex = EMPTY) -> None:
        self.model = model
        self.project = project
        self.state_columns = STATE_COLUMNS | {c.lower() for c in config.state_columns}
        self.reads: list[DbRead] = []
        self.writes: list[DbWrite] = []
        self._selected: dict[tuple[cst.CSTNode, str], DbRead] = {}  # (scope, cursor) -> SELECT
        for call in model.calls:
            self._classify_call(call)
        self._record_reads()
        self._attribute_writes()

    # -- classification --------------------------------------------------------------------

    def _classify_call(self, call: cst.Call) -> None:
        model = self.model
        func = call.func
        if not isinstance(func, cst.Attribute):
            if model.call_name(call) == "django.shortcuts.get_object_or_404" and call.args:
                self.reads.append(
                    DbRead(call, _model_name(model, call.args[0].value), False, (), _assigned_name(model, call))
                )
            return
        method = func.attr.value
        if _SETTER.match(method) and self._setter_write(call, method):
            return
        if method in EXECUTE_METHODS | ASYNCPG_FETCH and call.args:
            self._sql_call(call, method)
        elif method == "update" and _is_queryset(model, func.value):
            self._django_update(call)
        elif method in ("update", "values", "where") and self._sqlalchemy_update(call):
            pass
        elif method in DJANGO_READ_TERMINALS and _is_queryset(model, func.value, allow_manager=True):
            self._django_read(call)
        elif (
            method in DJANGO_CHAIN and isinstance(model.parents.get(call), cst.Subscript) and _is_queryset(model, call)
        ):
            self._django_read(call)  # Order.objects.filter(...)[0]
        elif method in SA_READ_TERMINALS | {"get"} and self._sqlalchemy_read(call):
            pass
        elif _custom_manager_read(model, call, method):
            self._django_read(call)  # `Order.objects.get_by_reference_number(ref)`
        elif method in CURSOR_FETCH and isinstance(func.value, (cst.Name, cst.Attribute)):
            key = (model.scope_of(call), model.dotted(func.value) or "")
            selected = self._selected.get(key)
            if selected is not None:
                self.reads.append(DbRead(call, selected.table, selected.locked, selected.columns))

    def _django_read(self, call: cst.Call) -> None:
        chain = _full_chain(self.model, call)
        model = self.model
        filters = tuple(_django_predicates(model, chain))
        self.reads.append(
            DbRead(
                call,
                _chain_model(model, chain),
                _locks(chain),
                tuple(p.column for p in filters),
                _assigned_name(model, call),
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
            count_read = statement.returning or self._result_used(call) or self._rowcount_read_after(call, receiver)
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
        chain = _full_chain(model, call.func.value)  # type: ignore[attr-defined]
        sets, values = {}, {}
        for arg in call.args:
            if arg.keyword is not None:
                sets[arg.keyword.value.lower()] = _python_value_kind(model, arg.value)
                values[arg.keyword.value.lower()] = arg.value
        where = tuple(_django_predicates(model, chain))
        self.writes.append(
            DbWrite(
                call,
                model.statement_of(call),
                "django",
                _chain_model(model, chain),
                sets,
                where,
                self._result_used(call),
                call=call,
                values=values,
            )
        )

    def _sqlalchemy_update(self, call: cst.Call) -> bool:
        """`update(Order).where(...).values(...)` (executed) or `query(Order).filter(...).update({...})`."""
        model = self.model
        chain = _chain(call)
        names = [model.call_name(c) or "" for c in chain]
        root = chain[-1] if chain else None
        method = call.func.attr.value  # type: ignore[attr-defined]
        root_name = (model.call_name(root) or "") if root is not None else ""
        if root is not None and root_name.startswith("sqlalchemy") and root_name.endswith(".update"):
            parent = model.parents.get(call)
            if isinstance(parent, cst.Attribute):
                return True  # not the end of the chain: the outermost call is classified
            table = _model_name(model, root.args[0].value) if root.args else None
            sets: dict[str, tuple[str, str]] = {}
            where: list[Predicate] = []
            for link in chain:
                attr = link.func.attr.value if isinstance(link.func, cst.Attribute) else ""
                if attr == "values":
                    sets.update(_values_sets(model, link))
                elif attr in ("where", "filter"):
                    where.extend(_sa_predicates(model, link))
            executed = self._executor_of(call)
            node = executed or call
            count_read = self._result_used(executed) if executed is not None else False
            self.writes.append(
                DbWrite(node, model.statement_of(node), "sqlalchemy", table, sets, tuple(where), count_read, call=node)
            )
            return True
        if method == "update" and any(n.endswith(".query") or n == "query" or n.endswith("query") for n in names):
            query = next(c for c in reversed(chain) if (model.call_name(c) or "").endswith("query"))
            table = _model_name(model, query.args[0].value) if query.args else None
            where = []
            for link in chain:
                attr = link.func.attr.value if isinstance(link.func, cst.Attribute) else ""
                if attr == "filter":
                    where.extend(_sa_predicates(model, link))
                elif attr == "filter_by":
                    where.extend(_kwarg_predicates(model, link))
            sets = _values_sets(model, call)
            self.writes.append(
                DbWrite(
                    call,
                    model.statement_of(call),
                    "sqlalchemy",
                    table,
                    sets,
                    tuple(where),
                    self._result_used(call),
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
        if method == "get" and _SESSION.search(receiver) and call.args:
            locked = keyword(call, "with_for_update") is not None
            self.reads.append(
                DbRead(call, _model_name(model, call.args[0].value), locked, (), _assigned_name(model, call))
            )
            return True
        chain = _chain(call)
        for link in list(chain):
            # session.execute(select(...)) / session.scalars(select(...)): follow the statement
            if (
                isinstance(link.func, cst.Attribute)
                and link.func.attr.value in ("execute", "scalars", "scalar")
                and link.args
            ):
                inner = _chain(link.args[0].value)
                if inner and (model.call_name(inner[-1]) or "").endswith("select"):
                    chain.extend(inner)
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
                columns = tuple(
                    p.column
                    for c in chain
                    if isinstance(c.func, cst.Attribute) and c.func.attr.value in ("where", "filter")
                    for p in _sa_predicates(model, c)
                )
                self.reads.append(
                    DbRead(call, _model_name(model, link.args[0].value), locked, columns, _assigned_name(model, call))
                )
                return True
        return False

    def _setter_write(self, call: cst.Call, method: str) -> bool:
        """`payment.change_status(PaymentStatus.CONFIRMED)`, `order.set_status("paid")`,
        `svc.update_subscription_status(sub_id, Status.Active)`: a state column written to a
        literal or constant through a method named for it. Integer arguments (an HTTP status)
        and calls that build a value (`span.set_status(Status(...))`) are not state writes."""
        model = self.model
        receiver = call.func.value  # type: ignore[attr-defined]
        if method in _NOT_SETTERS or _NOT_RECORDS.search(model.dotted(receiver) or ""):
            return False
        if any(
            keyword(call, k) is not None and _python_value_kind(model, keyword(call, k).value)[1] == "False"  # type: ignore[union-attr]
            for k in ("commit", "save", "persist", "flush")
        ):
            return False  # `change_fraud_status(..., commit=False)` changes the instance only
        if keyword(call, "pipeline") is not None or keyword(call, "pipe") is not None:
            return False  # queued on a transaction the caller executes (and WATCHes): judged there
        column = next(c for c in (*self.state_columns, "status") if method.endswith(c))
        argument = keyword(call, "status") or keyword(call, "state") or keyword(call, "new_status")
        values = [argument.value] if argument else [a.value for a in call.args if a.keyword is None][-1:]
        kinds = [_python_value_kind(model, v) for v in values]
        if not kinds or kinds[0][0] not in ("literal", "constant") or isinstance(values[0], cst.Integer):
            return False
        if kinds[0][0] == "literal" and not _STATE_WORD.match(kinds[0][1]):
            return False  # `set_process_status("-active-")`: a process title, not a state
        instance = receiver.value if isinstance(receiver, cst.Name) else None
        positional = [a for a in call.args if a.keyword is None]
        on_record = instance is not None and (instance == "self" or len(positional) <= 1)
        self.writes.append(
            DbWrite(
                call,
                model.statement_of(call),
                "setter" if on_record else "service",
                None,
                {column: kinds[0]},
                (),
                True,
                instance if on_record else None,
                call=call,
                values={column: values[0]},
                guarded=method in self.project.guarded_setters,
            )
        )
        return True

    def _record_reads(self) -> None:
        """Instances a function changes and saves without loading them: `self` in a model
        method, a parameter (a webhook's payment), a loop variable, a helper's result. Their
        fields were read by someone else, earlier and without a lock: a decision on them is
        a read-decide-write as much as one on a fresh `get()`."""
        model = self.model
        loaded = {(model.scope_of(r.call), r.instance) for r in self.reads if r.instance}
        wanted: dict[tuple[cst.CSTNode, str], None] = {}
        for target, _value, _statement in model.attribute_assigns:
            if isinstance(target.value, cst.Name):
                wanted[(model.scope_of(target), target.value.value)] = None
        for write in self.writes:
            if write.kind == "setter" and write.instance:
                wanted[(model.scope_of(write.node), write.instance)] = None
        for scope, name in wanted:
            if (scope, name) in loaded or not isinstance(scope, cst.FunctionDef):
                continue
            anchor = _record_anchor(model, scope, name)
            if anchor is not None:
                node, origin = anchor
                self.reads.append(DbRead(node, None, False, (), name, record=origin))

    def _attribute_writes(self) -> None:
        """`order.status = "paid"` followed by `order.save()` or `session.commit()`."""
        model = self.model
        loaded = {(model.scope_of(r.call), r.instance): r for r in self.reads if r.instance}
        setters = {(model.scope_of(w.node), w.instance) for w in self.writes if w.kind == "setter"}
        for target, value, statement in model.attribute_assigns:
            if not isinstance(target.value, cst.Name):
                continue
            instance = target.value.value
            scope = model.scope_of(target)
            read = loaded.get((scope, instance))
            if not _persisted_after(model, scope, instance, statement) and (scope, instance) not in setters:
                continue
            self.writes.append(
                DbWrite(
                    statement,
                    statement,
                    "attribute",
                    read.table if read else None,
                    {target.attr.value.lower(): _python_value_kind(model, value)},
                    (),
                    True,
                    instance,
                    values={target.attr.value.lower(): value},
                )
            )

    # -- row counts ------------------------------------------------------------------------------

    def _result_used(self, call: cst.Call | None) -> bool:
        """Whether the value of `call` is used: not a bare expression statement, and if
        assigned, the variable is read somewhere else in the function."""
        if call is None:
            return False
        model = self.model
        node: cst.CSTNode = call
        parent = model.parents.get(node)
        while isinstance(parent, cst.Await):
            node, parent = parent, model.parents.get(parent)
        if isinstance(parent, cst.Expr):
            return False
        if isinstance(parent, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
            names = {t.value for t in targets if isinstance(t, cst.Name)}
            if not names:
                return True
            scope = model.scope_of(call)
            index = _names_in(model, scope)
            return any(n not in targets and _is_read(model, n) for name in names for n in index.get(name, ()))
        return True

    def _rowcount_read_after(self, call: cst.Call, receiver: str) -> bool:
        model = self.model
        scope = model.scope_of(call)
        position = _order(model, scope)
        start = position.get(call, 0)
        for name in ("rowcount", "statusmessage"):
            for node in _names_in(model, scope).get(name, ()):
                parent = model.parents.get(node)
                if isinstance(parent, cst.Attribute) and parent.attr is node and model.dotted(parent.value) == receiver:
                    if position.get(node, 0) > start:
                        return True
        return False

    def _executor_of(self, statement_call: cst.Call) -> cst.Call | None:
        """The `session.execute(stmt)` that runs an update statement, directly or via a name."""
        model = self.model
        parent = model.parents.get(statement_call)
        if isinstance(parent, cst.Arg):
            outer = model.parents.get(parent)
            if (
                isinstance(outer, cst.Call)
                and isinstance(outer.func, cst.Attribute)
                and outer.func.attr.value in EXECUTE_METHODS
            ):
                return outer
        statement = model.statement_of(statement_call)
        if (
            isinstance(statement, cst.Assign)
            and len(statement.targets) == 1
            and isinstance(statement.targets[0].target, cst.Name)
        ):
            name = statement.targets[0].target.value
            scope = model.scope_of(statement_call)
            for call in model.calls:
                if (
                    model.scope_of(call) is scope
                    and isinstance(call.func, cst.Attribute)
                    and call.func.attr.value in EXECUTE_METHODS
                ):
                    if call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == name:
                        return call
        return None

    # -- helpers for rules --------------------------------------------------------------------------

    def is_state_column(self, column: str) -> bool:
        return column in self.state_columns

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


# -- module-level helpers --------------------------------------------------------------------------


def chain_calls(expr: cst.BaseExpression) -> list[cst.Call]:
    """The calls of a method chain, outermost first (public name for rules)."""
    return _chain(expr)


def _chain(expr: cst.BaseExpression) -> list[cst.Call]:
    """The calls of a method chain, outermost first: `a.filter(x).update(y)` -> [update, filter]."""
    calls = []
    node: cst.BaseExpression = expr
    while True:
        if isinstance(node, cst.Call):
            calls.append(node)
            node = node.func
        elif isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Await):
            node = node.expression
        else:
            return calls


def _full_chain(model: ModuleModel, expr: cst.BaseExpression, depth: int = 0) -> list[cst.Call]:
    """`_chain`, continued through a variable: `q = X.objects.filter(id=i, status=s); q.update(...)`
    gives the filter too (the latest assignment of the name before its use)."""
    chain = _chain(expr)
    root = _chain_root(expr)
    if depth > 4 or not isinstance(root, cst.Name):
        return chain
    scope = model.scope_of(root)
    position = _order(model, scope)
    at = position.get(root, 0)
    latest = None
    for binding in model.bindings_of(scope, root.value):
        where = position.get(binding.statement, -1)
        if binding.value is not None and where < at and (latest is None or where > position.get(latest.statement, -1)):
            latest = binding
    if latest is None or latest.kind != "assign" or not isinstance(latest.value, (cst.Call, cst.Attribute)):
        return chain
    return chain + _full_chain(model, latest.value, depth + 1)


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


def _custom_manager_read(model: ModuleModel, call: cst.Call, method: str) -> bool:
    """A method of a model's manager, other than the writes, whose result is kept in a
    name: a custom lookup that loads one row (`Order.objects.get_by_reference_number(r)`)."""
    func = call.func
    if method in _MANAGER_WRITES or method in DJANGO_CHAIN or not isinstance(func, cst.Attribute):
        return False
    owner = model.dotted(func.value) or ""
    head, _, manager = owner.rpartition(".")
    return manager == "objects" and head.rsplit(".", 1)[-1][:1].isupper() and _assigned_name(model, call) is not None


def _chain_root(expr: cst.BaseExpression) -> cst.BaseExpression:
    node = expr
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node


def _is_queryset(model: ModuleModel, expr: cst.BaseExpression, allow_manager: bool = False, depth: int = 0) -> bool:
    """`Model.objects...` or `Model.objects.filter(...)...`, directly or through a variable."""
    if depth > 4:  # `qs = qs.filter(...)` refers to itself
        return False
    dotted_parts = []
    node = expr
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Attribute):
            dotted_parts.append(node.attr.value)
        node = node.func if isinstance(node, cst.Call) else node.value
    if "objects" in dotted_parts or "_default_manager" in dotted_parts or "_base_manager" in dotted_parts:
        methods = [p for p in dotted_parts if p not in ("objects", "_default_manager", "_base_manager")]
        return all(m in DJANGO_CHAIN or m in DJANGO_READ_TERMINALS for m in methods) or allow_manager
    if isinstance(node, cst.Name) and isinstance(expr, cst.Name):
        for binding in model.bindings_of(model.scope_of(expr), expr.value):
            if (
                binding.value is not None
                and binding.value is not expr
                and _is_queryset(model, binding.value, False, depth + 1)
            ):
                return True
    return False


def _chain_model(model: ModuleModel, chain: list[cst.Call], depth: int = 0) -> str | None:
    root = _chain_root(chain[-1]) if chain else None
    if depth > 4:
        return None
    if isinstance(root, cst.Name):
        if root.value[:1].isupper():
            return root.value.lower()
        for binding in model.bindings_of(model.scope_of(root), root.value):
            if binding.value is not None and binding.value is not root:
                inner = _chain(binding.value)
                if inner:
                    return _chain_model(model, inner, depth + 1)
                found = _chain_root(binding.value)
                if isinstance(found, cst.Name) and found.value[:1].isupper():
                    return found.value.lower()
    if chain:
        attr = chain[-1].func
        while isinstance(attr, cst.Attribute):
            if isinstance(attr.value, cst.Name) and attr.value.value[:1].isupper():
                return attr.value.value.lower()
            attr = attr.value
    return None


def _model_name(model: ModuleModel, expr: cst.BaseExpression) -> str | None:
    """`Order` -> order, `models.Order` -> order, `Order.status` (a column) -> order."""
    dotted = model.dotted(expr)
    if dotted is None:
        return None
    parts = dotted.split(".")
    classes = [p for p in parts if p[:1].isupper()]
    return (classes[-1] if classes else parts[-1]).lower()


def _locks(chain: list[cst.Call]) -> bool:
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value in _LOCK_WORDS for c in chain)


def _assigned_name(model: ModuleModel, call: cst.Call) -> str | None:
    node: cst.CSTNode = call
    parent = model.parents.get(node)
    while isinstance(parent, (cst.Await, cst.Subscript, cst.SubscriptElement, cst.Index)):
        node, parent = parent, model.parents.get(parent)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return parent.targets[0].target.value
    if isinstance(parent, cst.AnnAssign) and isinstance(parent.target, cst.Name):
        return parent.target.value
    if isinstance(parent, cst.NamedExpr) and isinstance(parent.target, cst.Name):
        return parent.target.value
    return None


def _filter_columns(model: ModuleModel, chain: list[cst.Call]) -> tuple[str, ...]:
    return tuple(p.column for p in _django_predicates(model, chain))


def _django_predicates(model: ModuleModel, chain: list[cst.Call]) -> list[Predicate]:
    found = []
    for link in chain:
        attr = link.func.attr.value if isinstance(link.func, cst.Attribute) else ""
        if attr in ("filter", "exclude", "get"):
            found.extend(_kwarg_predicates(model, link))
    return found


_LOOKUPS = {"exact": "eq", "iexact": "eq", "in": "in", "lt": "lt", "lte": "lt", "gt": "gt", "gte": "gt", "isnull": "is"}
# Every other Django lookup and transform: the column is before it, and it is not equality.
_OTHER_LOOKUPS = set(
    "contains icontains startswith istartswith endswith iendswith range date year iso_year month day week "
    "week_day iso_week_day quarter time hour minute second regex iregex overlap contained_by has_key has_keys "
    "has_any_keys len search trigram_similar unaccent lower upper".split()
)


def _kwarg_predicates(model: ModuleModel, call: cst.Call) -> list[Predicate]:
    found = []
    for arg in call.args:
        if arg.keyword is not None:
            parts = arg.keyword.value.lower().split("__")
            op = "eq"
            while len(parts) > 1 and parts[-1] in _LOOKUPS.keys() | _OTHER_LOOKUPS:
                lookup = parts.pop()
                op = _LOOKUPS.get(lookup, "other") if op == "eq" else op
            kind = _python_value_kind(model, arg.value)[0]
            value = _predicate_value(kind)
            # `order__status=...` constrains a related row, not this one: kept as `order__status`.
            found.append(Predicate("__".join(parts), op, value))
        else:
            for node in iter_nodes(arg.value):  # Q(status="paid") | Q(...)
                if isinstance(node, cst.Call) and (model.call_name(node) or "").endswith("Q"):
                    found.extend(_kwarg_predicates(model, node))
    return found


def _predicate_value(kind: str) -> str:
    return kind if kind in ("bool", "null") else "literal" if kind in ("literal", "constant") else kind


def _sa_predicates(model: ModuleModel, call: cst.Call) -> list[Predicate]:
    found = []
    for arg in call.args:
        for node in (arg.value, *iter_nodes(arg.value)):
            if isinstance(node, cst.Comparison):
                column = model.dotted(node.left)
                for target in node.comparisons:
                    if column and "." in column:
                        op = (
                            "eq"
                            if isinstance(target.operator, cst.Equal)
                            else "in"
                            if isinstance(target.operator, cst.In)
                            else "ne"
                            if isinstance(target.operator, cst.NotEqual)
                            else "lt"
                        )
                        kind = _python_value_kind(model, target.comparator)[0]
                        found.append(
                            Predicate(
                                column.rsplit(".", 1)[-1].lower(),
                                op,
                                _predicate_value(kind),
                            )
                        )
            elif (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in ("in_", "is_", "isnot", "is_not", "between")
            ):
                column = model.dotted(node.func.value)
                if column and "." in column:
                    found.append(Predicate(column.rsplit(".", 1)[-1].lower(), "in", "literal"))
    return found


def _values_sets(model: ModuleModel, call: cst.Call) -> dict[str, tuple[str, str]]:
    sets = {}
    for arg in call.args:
        if arg.keyword is not None:
            sets[arg.keyword.value.lower()] = _python_value_kind(model, arg.value)
        elif isinstance(arg.value, cst.Dict):
            for element in arg.value.elements:
                if isinstance(element, cst.DictElement):
                    key = string_value(element.key) or model.dotted(element.key)
                    if key:
                        sets[key.rsplit(".", 1)[-1].lower()] = _python_value_kind(model, element.value)
    return sets


def _python_value_kind(model: ModuleModel, expr: cst.BaseExpression) -> tuple[str, str]:
    """literal ("paid", 3), bool, null, constant (OrderStatus.PAID), expr (F(), a variable)."""
    text = string_value(expr)
    if text is not None:
        return "literal", text
    if isinstance(expr, (cst.Integer, cst.Float)):
        return "literal", expr.value
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return "bool", expr.value
    if isinstance(expr, cst.Name) and expr.value == "None":
        return "null", "None"
    dotted = model.dotted(expr)
    if dotted is not None and _CONSTANT.match(dotted.rsplit(".", 1)[-1]):
        return "constant", dotted
    if dotted is not None and _STATE_ENUM.search(dotted):
        return "constant", dotted  # `SubscriptionStatus.Active`, `Order.Status.paid`
    return "expr", ""


def _persisted_after(model: ModuleModel, scope: cst.CSTNode, instance: str, statement: cst.CSTNode) -> bool:
    """An `instance.save(...)` or a session/db `commit()`/`flush()` after the assignment."""
    position = _order(model, scope)
    start = position.get(statement, 0)
    for index, owner, method in _persist_calls(model, scope):
        if index > start and (
            method.startswith(("save", "asave")) and owner == instance or method in ("commit", "flush")
        ):
            return True
    return False


def _names_in(model: ModuleModel, scope: cst.CSTNode) -> dict[str, list[cst.Name]]:
    """Every Name node of a scope (attribute names included), by identifier, computed once."""
    cache = model.__dict__.setdefault("_names_in", {})
    found = cache.get(scope)
    if found is None:
        found = {}
        for node in iter_nodes(scope):
            if type(node) is cst.Name:
                found.setdefault(node.value, []).append(node)
        cache[scope] = found
    return found


def _persist_calls(model: ModuleModel, scope: cst.CSTNode) -> list[tuple[int, str, str]]:
    """(position, receiver, method) of every save/commit/flush call in a scope, computed once."""
    cache = model.__dict__.setdefault("_persist_calls", {})
    found = cache.get(scope)
    if found is None:
        position = _order(model, scope)
        found = []
        for node in iter_nodes(scope):
            if type(node) is cst.Call and type(node.func) is cst.Attribute:
                method = node.func.attr.value
                owner = model.dotted(node.func.value) or ""
                if method.startswith(("save", "asave")) or method in ("commit", "flush") and _SESSION.search(owner):
                    found.append((position[node], owner, method))
        cache[scope] = found
    return found


def _is_read(model: ModuleModel, name: cst.Name) -> bool:
    parent = model.parents.get(name)
    if isinstance(parent, cst.AssignTarget) and parent.target is name:
        return False
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    return not (isinstance(parent, cst.Arg) and parent.keyword is name)


def _order(model: ModuleModel, scope: cst.CSTNode) -> dict[cst.CSTNode, int]:
    """Source order of every node in a scope (pre-order), for "after" questions."""
    cache = model.__dict__.setdefault("_order_cache", {})
    found = cache.get(scope)
    if found is None:
        found = {node: index for index, node in enumerate(iter_nodes(scope))}
        cache[scope] = found
    return found


_SETTER = SETTER
_NOT_SETTERS = frozenset({"update_state"})
_STATE_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_ ]{0,40}$")  # Celery's progress report
_NOT_RECORDS = re.compile(r"(^|\.)(span|response|resp|request|handler|trace|current_span)$", re.IGNORECASE)
# Methods whose `self` is not a stored row yet, or that define persistence itself.
_NOT_RECORD_METHODS = frozenset(
    {
        "__init__",
        "__post_init__",
        "save",
        "asave",
        "clean",
        "full_clean",
        "pre_save",
        "delete",
        "create",
        "setUp",
        "setUpTestData",
        "from_db",
        "refresh_from_db",
        "__setstate__",
    }
)
# Base classes of stored rows: Django/SQLAlchemy/Flask models and documents.
_MODEL_BASE = re.compile(r"(^|\.)(\w*Model|Document|Base)$")


def _stores_itself(model: ModuleModel, owner: cst.ClassDef) -> bool:
    """A class whose instances are rows: a model base (`models.Model`, `db.Model`,
    `TimeStampedModel`, a declarative `Base`), or a mixin of one that saves itself."""
    if any(_MODEL_BASE.search(model.dotted(b.value) or "") for b in owner.bases):
        return True
    return any(
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value.startswith("save")
        and type(node.func.value) is cst.Name
        and node.func.value.value == "self"
        for node in iter_nodes(owner.body, stop_at_functions=False)
    )


# Helpers whose result is a new object, not a stored row someone else decided on.
_CONSTRUCTORS = re.compile(r"^(create|make|build|new|copy|clone|construct|init|prepare)(_|$)|(^|\.)create$")


def _record_anchor(model: ModuleModel, scope: cst.FunctionDef, name: str) -> tuple[cst.CSTNode, str] | None:
    """Where `name` gets its value in `scope`, when that makes it a stored row this function
    did not load: (node, what kind of record) or None."""
    bindings = model.bindings_of(scope, name)
    if not bindings:
        return None
    if len({id(b.statement) for b in bindings}) > 1:
        return None  # rebound in the function: judged by the loaded-read rules
    binding = bindings[0]
    if binding.kind == "param":
        params = scope.params.params
        method = isinstance(model.parents.get(model.parents.get(scope)), cst.ClassDef)  # type: ignore[arg-type]
        if name == "cls" or method and params and params[0].name.value == name and name != "self":
            return None
        if name == "self":
            owner = model.enclosing_class(scope)
            if owner is None or scope.name.value in _NOT_RECORD_METHODS:
                return None
            if not _stores_itself(model, owner):
                return None  # a worker, a form, a client: not a stored row
            if any(_decorator_name(d) in ("classmethod", "staticmethod") for d in scope.decorators):
                return None
            return binding.statement, "self"
        return binding.statement, "parameter"
    if binding.kind == "for" and isinstance(binding.value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        return binding.statement, "loop variable"
    if binding.kind == "assign" and isinstance(binding.value, (cst.Call, cst.Await)):
        call = binding.value.expression if isinstance(binding.value, cst.Await) else binding.value
        if not isinstance(call, cst.Call):
            return None
        callee = model.dotted(call.func) or ""
        last = callee.rsplit(".", 1)[-1]
        if not callee or last[:1].isupper() or _CONSTRUCTORS.search(last) and "_or_update" not in last:
            return None
        if last in ("save", "get_or_create", "update_or_create", "copy", "deepcopy") or "super" in callee:
            return None
        return call, "helper result"
    return None


def _decorator_name(decorator: cst.Decorator) -> str:
    node = decorator.decorator
    node = node.func if isinstance(node, cst.Call) else node
    return node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""


@dataclass(frozen=True)
class Race:
    read: DbRead
    test: cst.BaseExpression
    columns: tuple[str, ...]  # the columns the decision looked at


def races(model: ModuleModel, db: DbAnalysis) -> dict[int, Race]:
    """Writes (by id of DbWrite) decided in Python by an unlocked read of the same record,
    with no re-check in the write itself: IDM101's findings, also used to keep IDM103 quiet."""
    cached = model.__dict__.get("_races")
    if cached is not None:
        return cached
    found: dict[int, Race] = {}
    for write in db.writes:
        for read, test in decisions(model, db, write):
            columns = _decided_columns(model, test, read)
            if not _decides_state(columns) or is_locked(model, db, read) or _rechecks(db, write, columns):
                continue
            if write.kind == "attribute" and not _latest_binding_is(model, write, read):
                continue  # the variable was rebound (a created object) between the read and the write
            found[id(write)] = Race(read, test, columns)
            break
    for write in db.writes:
        if id(write) not in found:
            race = _selected_by_state(model, db, write)
            if race is not None:
                found[id(write)] = race
    by_test: dict[int, list[DbWrite]] = {}
    for write in db.writes:
        if id(write) in found:
            by_test.setdefault(id(found[id(write)].test), []).append(write)
    for writes in by_test.values():
        race = found[id(writes[0])]
        written = {c for w in writes for c in w.sets}
        if not written & set(race.columns) and not any(
            db.is_state_column(c) or VERSION_COLUMNS.match(c) for c in race.columns
        ):
            # the test is about eligibility (`if user.is_active:`, `if key.type == "secret"`), not a
            # value the write changes: two runs write the same thing
            for write in writes:
                del found[id(write)]
            continue
        if all(_converges(model, db, race, w) for w in writes) and not _side_effect_in(model, db, race.test, writes):
            for write in writes:
                del found[id(write)]
    model.__dict__["_races"] = found
    return found


def _selected_by_state(model: ModuleModel, db: DbAnalysis, write: DbWrite) -> Race | None:
    """Rows chosen by a state filter, then written by id with no state condition:
    `ids = Order.objects.filter(status=UNCONFIRMED).values_list("pk")` then
    `Order.objects.filter(id__in=ids).update(status=EXPIRED)`. A row that changed state in
    between (or that an overlapping run already took) is written all the same."""
    if write.kind not in ("django", "sql", "sqlalchemy") or any(db.is_condition(p) for p in write.where):
        return None
    scope = model.scope_of(write.node)
    position = _order(model, scope)
    chosen_by = {id(n) for n in _write_inputs(model, write)}
    for read in db.reads:
        if read.record or model.scope_of(read.call) is not scope or not _same_record(read, write):
            continue
        if position.get(read.call, 0) >= position.get(write.node, 0) or is_locked(model, db, read):
            continue
        if id(read.call) not in chosen_by:
            continue  # the write's rows do not come from this read
        columns = tuple(
            p.column
            for p in read.filters
            if p.column in write.sets and (db.is_state_column(p.column) or db.is_condition(p))
        )
        if columns:
            return Race(read, read.call, columns)  # type: ignore[arg-type]
    return None


def _write_inputs(model: ModuleModel, write: DbWrite) -> list[cst.CSTNode]:
    """Every node the write's filter arguments are computed from."""
    if write.call is None:
        return []
    found: list[cst.CSTNode] = []
    for link in _chain(write.call):
        for arg in link.args:
            found.extend(origin_nodes(model, arg.value))
    return found


def _converges(model: ModuleModel, db: DbAnalysis, race: Race, write: DbWrite) -> bool:
    """Whether running the write twice leaves what running it once does: it sets a state
    column only to the value the test compared it with (`if x.status != v: x.status = v`),
    and other columns to anything that does not build on their old value (a flag, a
    timestamp, a lazily filled default; not `n -= 1` or `total = total + x`)."""
    if isinstance(write.statement, cst.AugAssign):
        return string_value(write.statement.value) is not None  # `x.log += "; "` only picks text
    for column, value in write.values.items() or [(c, None) for c in write.sets]:
        if value is None:
            return False
        if db.is_state_column(column):
            if _value_key(model, value) not in _compared_values(model, race.test, column):
                return False
        elif _accumulates(model, value, column, write.instance):
            return False  # builds on the old value: `x.n = x.n + 1`, `F("credits") - amount`
    return True


def _accumulates(model: ModuleModel, value: cst.BaseExpression, column: str, instance: str | None) -> bool:
    """Arithmetic on the column's old value: `x.n + 1`, `F("credits") - amount`. Reading the
    old value to normalise it (`x.book = x.book.edition`) or another object's attribute of
    the same name (`x.connector = self.connector`) gives the same result on every run."""
    for node in (value, *iter_nodes(value)):
        if type(node) is not cst.BinaryOperation:
            continue
        for operand in (node.left, node.right, *iter_nodes(node)):
            if type(operand) is cst.Attribute and operand.attr.value.lower() == column:
                owner = model.dotted(operand.value)
                if instance is None or owner == instance:
                    return True
            if type(operand) is cst.SimpleString and (string_value(operand) or "").lower() == column:
                return True  # F("credits")
    return False


def _value_key(model: ModuleModel, expr: cst.BaseExpression) -> str | None:
    text = string_value(expr)
    if text is not None:
        return repr(text)
    if isinstance(expr, (cst.Integer, cst.Float)):
        return expr.value
    return model.dotted(expr)


def _compared_values(model: ModuleModel, test: cst.BaseExpression, column: str) -> set[str | None]:
    """What a test compares `column` with: `x.status != "paid"` gives {'paid'}."""
    found: set[str | None] = set()
    for node in (test, *iter_nodes(test)):
        if type(node) is not cst.Comparison:
            continue
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if any(type(s) is cst.Attribute and s.attr.value.lower() == column for s in sides):
            found.update(
                _value_key(model, s) for s in sides if not (type(s) is cst.Attribute and s.attr.value.lower() == column)
            )
    found.discard(None)
    return found


# Calls that change nothing outside the process: logging, builtins, clocks, responses, getters.
_QUIET_CALLS = re.compile(
    r"^(\w+\.)*(print|len|str|int|float|bool|list|dict|set|tuple|min|max|sum|sorted|isinstance|getattr|hasattr|"
    r"repr|format|round|abs|any|all|_|gettext|gettext_lazy|ugettext|ugettext_lazy|ngettext|reverse|redirect|render|"
    r"render_to_response|super|emit_\w+|now|utcnow|today|time|monotonic|warn)$"
)
_QUIET_RECEIVERS = re.compile(r"(^|\.)(_?log|_?logger|logging|LOGGER|LOG|messages|stdout|stderr)$")
_QUIET_METHODS = (
    frozenset(
        {
            "save",
            "asave",
            "commit",
            "flush",
            "refresh_from_db",
            "full_clean",
            "format",
            "join",
            "strip",
            "lower",
            "upper",
            "total_seconds",
            "isoformat",
            "get",
            "items",
            "keys",
            "values",
            "append",
            "add",
            "copy",
        }
    )
    | DJANGO_CHAIN
    | DJANGO_READ_TERMINALS
)


def _side_effect_in(model: ModuleModel, db: DbAnalysis, test: cst.BaseExpression, writes: list[DbWrite]) -> bool:
    """Whether the code a test decides calls anything beyond the writes themselves that
    may act outside the process (another row, a message, a signal, a payment)."""
    guard = model.parents.get(test)
    if not isinstance(guard, cst.If):
        return True
    if any(model.is_inside(w.node, guard.body) for w in writes):
        region: list[cst.CSTNode] = [guard.body]  # the else branch runs when nothing was written
    elif any(model.is_inside(w.node, guard) for w in writes):
        region = [guard.orelse] if guard.orelse else []
    else:
        block = model.parents.get(guard)
        body = list(getattr(block, "body", ()))
        region = body[body.index(guard) + 1 :] if guard in body else []
    own = {id(w.call) for w in writes if w.call is not None}
    for root in region:
        for node in iter_nodes(root):
            if type(node) is cst.Call and id(node) not in own and not _quiet_call(model, node, writes):
                return True
    return False


def _quiet_call(model: ModuleModel, node: cst.Call, writes: list[DbWrite]) -> bool:
    """A call that changes nothing outside the process (or only computes a written value)."""
    name = model.call_name(node) or ""
    method = node.func.attr.value if type(node.func) is cst.Attribute else ""
    receiver = model.dotted(node.func.value) if type(node.func) is cst.Attribute else None
    return bool(
        _QUIET_CALLS.match(name)
        or method in _QUIET_METHODS
        or (receiver and _QUIET_RECEIVERS.search(receiver))
        or re.match(r"^(get|is|has)_", method or name.rsplit(".", 1)[-1])
        and "create" not in name
        or name.rsplit(".", 1)[-1][:1].isupper()
        and not method
        or any(model.is_inside(node, v) for w in writes for v in w.values.values())
    )


def effect_after(model: ModuleModel, write: DbWrite) -> bool:
    """Whether the function calls anything with an outside effect on a path after the write
    (not in another branch of an `if` that holds it, not past a `return` that follows it)."""
    scope = model.scope_of(write.node)
    position = _order(model, scope)
    end = max((position.get(n, 0) for n in (write.statement, *iter_nodes(write.statement))), default=0)
    stop = _leaves_after(model, write.statement, position)
    other_branches = [
        branch
        for ancestor in model.ancestors(write.statement)
        if isinstance(ancestor, cst.If)
        for branch in ((ancestor.orelse,) if model.is_inside(write.statement, ancestor.body) else (ancestor.body,))
        if branch is not None
    ]
    own = {id(write.call)} if write.call is not None else set()
    return any(
        type(node) is cst.Call
        and end < position.get(node, 0) < stop
        and id(node) not in own
        and not any(model.is_inside(node, branch) for branch in other_branches)
        and not _quiet_call(model, node, [write])
        for node in iter_nodes(scope)
    )


def _leaves_after(model: ModuleModel, statement: cst.CSTNode, position: dict[cst.CSTNode, int]) -> int:
    """The position of a `return`/`raise` that ends the write's block right after it, or infinity."""
    line = model.parents.get(statement)
    block = model.parents.get(line) if line is not None else None
    body = list(getattr(block, "body", ()))
    if line in body:
        for later in body[body.index(line) + 1 :]:
            if isinstance(later, cst.SimpleStatementLine) and any(
                isinstance(s, (cst.Return, cst.Raise)) for s in later.body
            ):
                return position.get(later, 1 << 60)
    return 1 << 60


def decisions(model: ModuleModel, db: DbAnalysis, write: DbWrite) -> Iterator[tuple[DbRead, cst.BaseExpression]]:
    """(read, test) pairs where a test on a read of the same record decides the write."""
    scope = model.scope_of(write.node)
    scope_reads = [r for r in db.reads if model.scope_of(r.call) is scope and _same_record(r, write)]
    if not scope_reads:
        return
    written_from = {id(n) for value in write.values.values() for n in origin_nodes(model, value) if type(n) is cst.Call}
    for test in deciding_tests(model, write.node):
        origins = set(origin_nodes(model, test))
        for read in scope_reads:
            if read.call in origins or read.record and any(_field_of(model, n, read.instance) for n in origins):
                yield read, test
            elif any(id(n) in written_from and _computes_from(n, read.instance) for n in origins):
                yield read, test  # `new = next_status(order); if new is None: return; order.status = new`


def _computes_from(call: cst.CSTNode, instance: str | None) -> bool:
    """A call given the instance itself: `determine_order_status_change(order, decision)`."""
    return (
        type(call) is cst.Call
        and instance is not None
        and any(type(a.value) is cst.Name and a.value.value == instance for a in call.args)
    )


def _field_of(model: ModuleModel, node: cst.CSTNode, instance: str | None) -> bool:
    """`order.status` (not `order.save()`, not `order._state`) for the named instance."""
    if type(node) is not cst.Attribute or type(node.value) is not cst.Name or node.value.value != instance:
        return False
    parent = model.parents.get(node)
    return not (type(parent) is cst.Call and parent.func is node) and not node.attr.value.startswith("_")


def deciding_tests(model: ModuleModel, node: cst.CSTNode) -> list[cst.BaseExpression]:
    """Tests that decide whether `node` runs: enclosing `if`s, and earlier `if`s in the
    same or an enclosing block whose body leaves (`if order.paid: return`)."""
    tests: list[cst.BaseExpression] = []
    child = node
    for ancestor in model.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(ancestor, cst.If) and child is not ancestor.test:
            tests.append(ancestor.test)
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
            for previous in ancestor.body:
                if previous is child:
                    break
                if isinstance(previous, cst.If) and always_leaves(list(previous.body.body), or_continues=True):
                    tests.append(previous.test)
        child = ancestor
    return tests


def _same_record(read: DbRead, write: DbWrite) -> bool:
    if write.kind in ("attribute", "setter"):
        return write.instance is not None and write.instance == read.instance
    return read.table is not None and write.table is not None and _singular(read.table) == _singular(write.table)


def _singular(table: str) -> str:
    return table[:-1] if table.endswith("s") else table


def _decided_columns(model: ModuleModel, test: cst.BaseExpression, read: DbRead) -> tuple[str, ...]:
    """The columns a test looks at: `order.status`, a name unpacked from the row
    (`status, total = cur.fetchone()`), `row["status"]`, or the filter of an `exists()`.
    An existence check (`if order is None`) looks at no column."""
    columns: list[str] = []
    read_names = {
        b.name
        for names in model.bindings.get(model.scope_of(read.call), {}).values()
        for b in names
        if b.value is not None and (b.value is read.call or model.is_inside(read.call, b.value))
    }
    for node in (test, *iter_nodes(test)):
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == read.instance:
            parent = model.parents.get(node)
            if type(parent) is cst.Call and parent.func is node:
                continue  # `if profile.send_report():` decides on what a method did, not on a column
            columns.append(node.attr.value.lower())
        elif type(node) is cst.Name and node.value in read_names:
            parent = model.parents.get(node)
            if type(parent) is cst.Subscript:
                index = parent.slice[0].slice if parent.slice else None
                key = string_value(index.value) if isinstance(index, cst.Index) else None
                columns.extend([key.lower()] if key else read.columns)
            elif type(parent) is cst.Attribute and parent.value is node:
                continue
            elif node.value != read.instance or _compared_to_value(model, node):
                # `status, total = cur.fetchone()`: the name, and the SELECT's columns it came from
                columns.extend([node.value.lower(), *read.columns])
        elif node is read.call or type(node) is cst.Call and model.is_inside(read.call, node):
            # `if Order.objects.filter(..., status="paid").exists():` decides on the condition filters;
            # a lookup by identity or by a related object (`filter(oob_ip=instance)`) only finds the row
            columns.extend(_condition_columns(read) if read.filters else read.columns)
    for node in origin_nodes(model, test):
        if type(node) is cst.Call and node is not read.call and _computes_from(node, read.instance):
            # `new = next_status(order)`: the helper decides the state columns it feeds
            columns.extend(c for c in _columns_fed_by(model, node) if c in STATE_COLUMNS)
    return tuple(dict.fromkeys(columns))


def _columns_fed_by(model: ModuleModel, call: cst.Call) -> set[str]:
    """The attributes assigned from a call's result in its function (`order.status = new`)."""
    scope = model.scope_of(call)
    found = set()
    for target, value, _statement in model.attribute_assigns:
        if model.scope_of(target) is scope and any(n is call for n in origin_nodes(model, value)):
            found.add(target.attr.value.lower())
    return found


def _condition_columns(read: DbRead) -> list[str]:
    return [
        p.column
        for p in read.filters
        if p.value in ("literal", "bool", "null") or p.op in ("is", "lt", "gt") or p.column in STATE_COLUMNS
    ]


def _compared_to_value(model: ModuleModel, name: cst.Name) -> bool:
    """`status != "created"` looks at a value; `order is None` and `not order` only at existence."""
    parent = model.parents.get(name)
    if type(parent) is not cst.Comparison:
        return False
    others = [parent.left, *(c.comparator for c in parent.comparisons)]
    return any(o is not name and not (type(o) is cst.Name and o.value == "None") for o in others)


def _decides_state(columns: tuple[str, ...]) -> bool:
    """A decision on something that changes (a status, a balance, a flag), not on who
    owns the row or whether it exists."""
    return any(not IDENTITY.search(c) for c in columns)


def is_locked(model: ModuleModel, db: DbAnalysis, read: DbRead) -> bool:
    """The read locks, or the function takes a row lock on the same table elsewhere
    (`select_for_update().filter(pk__in=ids)` before re-reading)."""
    if read.locked:
        return True
    scope = model.scope_of(read.call)
    if read.record:
        return any(r.locked and model.scope_of(r.call) is scope for r in db.reads) or _locks_in_sql(model, scope)
    return read.table is not None and any(
        r.locked and r.table == read.table and model.scope_of(r.call) is scope for r in db.reads
    )


_LOCK_SQL = re.compile(r"\bLOCK\s+TABLE|\bFOR\s+(NO\s+KEY\s+)?UPDATE\b|pg_advisory(_xact)?_lock", re.IGNORECASE)


def _locks_in_sql(model: ModuleModel, scope: cst.CSTNode) -> bool:
    """A table, row or advisory lock taken in SQL text somewhere in the function."""
    return any(
        model.scope_of(s) is scope and _LOCK_SQL.search(string_value(s) or "")
        for s in model.strings
        if isinstance(s, cst.SimpleString | cst.ConcatenatedString)
    )


def loaded_read(model: ModuleModel, db: DbAnalysis, write: DbWrite) -> DbRead | None:
    """For `order.status = ...`: the read that loaded `order`, if that is what the name
    holds at this point (not a row created or re-assigned in between)."""
    scope = model.scope_of(write.node)
    for read in db.reads:
        if (
            read.instance == write.instance
            and model.scope_of(read.call) is scope
            and _latest_binding_is(model, write, read)
        ):
            return read
    return None


def _latest_binding_is(model: ModuleModel, write: DbWrite, read: DbRead) -> bool:
    scope = model.scope_of(write.node)
    position = _order(model, scope)
    at = position.get(write.node, 0)
    latest = None
    for binding in model.bindings_of(scope, write.instance or ""):
        where = position.get(binding.statement, -1)
        if where < at and (latest is None or where > position.get(latest.statement, -1)):
            latest = binding
    if read.record:
        return latest is not None and (latest.statement is read.call or latest.value is read.call)
    return latest is not None and latest.value is not None and model.is_inside(read.call, latest.value)


def _rechecks(db: DbAnalysis, write: DbWrite, columns: tuple[str, ...]) -> bool:
    conditions = [p for p in write.where if db.is_condition(p)]
    if not conditions:
        return False
    if not columns or "*" in columns:
        return True
    return any(p.column in columns for p in conditions) or any(VERSION_COLUMNS.match(p.column) for p in conditions)
