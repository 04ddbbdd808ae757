"""What the database analysis finds: reads, writes, and the vocabulary of calls and columns
that the DB-API, Django and SQLAlchemy classifiers share."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.knowledge.orms import DJANGO, SQLALCHEMY

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.sql import Predicate
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
# the kinds of value (as `python_value_kind` gives them) that are the same on every run
FIXED_VALUE_KINDS = frozenset({"literal", "constant", "bool", "null"})
# the value kind of a caller's write where the function it calls adds to the column's old value
# (`account.add_credits(n)`, from its summary's `builds_on`: `analysis/db/adding_methods.py`)
BUILT = "built"
VERSION_COLUMNS = re.compile(
    r"^(version|revision|rev|seq|sequence|lock_version|etag|generation|updated_at|modified_at|row_version)$"
)
IDENTITY = re.compile(
    r"^(id|pk|uuid|guid|key|slug)$|_(id|pk|uuid|guid|ref|key|token|number|code|sku)$|^(tenant|owner|customer|user|account|merchant|org|organization|shop|store|site|channel)$"
)
# The columns that name a row itself (not its parent's row: `order_id` on a line item)
OWN_KEYS = frozenset({"id", "pk", "uuid", "guid"})
SESSION = re.compile(r"(^|[._])(session|db|s)$")


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
    record: str = ""  # for records: "self", "parameter", "loop variable", "helper result" or "held"


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
    # a model method's own write (`order.ship()`): IDM103 reports it once, in the method
    judged_in_method: bool = False

    def described(self) -> str:
        """How a message names the write: `order.status = ... (saved later)`, `order.ship(...)`,
        `mark_sending(notification, ...)` (a helper given the instance), `the UPDATE of orders`."""
        if self.kind == "attribute":
            return f"{self.instance}.{next(iter(self.sets), '?')} = ... (saved later)"
        if self.kind in ("setter", "service") and self.call is not None:
            more = ", ..." if len(self.call.args) > 1 else ""
            func, given = self.call.func, f"{self.instance or '...'}{more}"
            if isinstance(func, cst.Name):
                return f"{func.value}({given})"
            if not isinstance(func, cst.Attribute):
                return "the state setter"
            receiver = func.value.value if isinstance(func.value, cst.Name) else "..."
            return f"{receiver}.{func.attr.value}({'...' if receiver == self.instance else given})"
        table = f" of {self.table}" if self.table else ""
        return f"the {_DESCRIBED.get(self.kind, self.kind)}{table}"


def record_name(node: cst.CSTNode) -> str | None:
    """How code names a record it writes or tests: a name (`order`), or an attribute of `self`
    (`self.round`: a record the object holds, loaded by whoever first used it)."""
    if type(node) is cst.Name:
        return node.value
    if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":
        return f"self.{node.attr.value}"
    return None


def reads_the_record(model: ModuleModel, value: cst.BaseExpression, record: str) -> bool:
    """`x.next_due()`, `self.round.next_stage()`: the value is computed from the record itself
    (as code names it: `self.user`, not `self.cleaned_data`)."""
    return any(
        type(node) in (cst.Name, cst.Attribute) and record_name(node) == record
        for node in (value, *model.iter_nodes(value))
    )


_DESCRIBED = {"sql": "UPDATE", DJANGO: "QuerySet.update()", SQLALCHEMY: "update()", "attribute": "assignment"}
