"""Lost updates: a column written from its own value as an unlocked read loaded it
(`coupon.used += 1; coupon.save()`, `wallet.balance = wallet.balance - amount`). No test
decides the write, but two overlapping runs both read the old value and both write it plus
their change: one change is lost (a coupon used past its limit, stock sold twice). The read
must be made in the function (a query, `get_object_or_404`), so the value the arithmetic
builds on is the one the run loaded; a lock on the read, a lock held over both, or a write the
ORM makes at the version it read keep it safe."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.records import DbRead
from idemlint.analysis.model import string_value

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db.classify import DbAnalysis
    from idemlint.analysis.db.records import DbWrite
    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def lost_update(
    model: ModuleModel, db: DbAnalysis, write: DbWrite
) -> tuple[DbRead, cst.BaseExpression, tuple[str, ...]] | None:
    """For an attribute write that builds on the column's old value, loaded without a lock
    earlier in the same function: (the latest such load of the instance before the write, the
    value written, the columns)."""
    from idemlint.analysis.db.decisions import latest_binding_is, same_record
    from idemlint.analysis.db.locks import is_locked, locked_together, row_locked_first
    from idemlint.analysis.flow import runs_before

    if write.kind != "attribute" or write.instance is None:
        return None
    columns = built_columns(model, write)
    if not columns:
        return None
    scope = model.scope_of(write.node)
    loads = [
        r
        for r in db.reads
        if not r.record
        and same_record(r, write)
        and model.scope_of(r.call) is scope
        and runs_before(model, r.call, write.node)
    ]
    related = _related_load(model, write, scope)
    if not loads and related is not None:
        loads = [DbRead(related, None, False, instance=write.instance, record="related")]
    for read in reversed(loads):
        if _tallied_in_a_loop(model, read, write, scope):
            return None  # the run's own tally over its work, saved as it goes: not another run's change lost
        if read.record:
            return read, _written_value(write, columns), columns
        if (
            is_locked(model, db, read)
            or row_locked_first(model, db, read, write.node)
            or locked_together(model, read, write)
        ):
            return None
        if latest_binding_is(model, write, read):
            return read, _written_value(write, columns), columns
    return None


def _written_value(write: DbWrite, columns: tuple[str, ...]) -> cst.BaseExpression:
    statement = write.statement
    return statement.value if isinstance(statement, cst.AugAssign) else write.values[columns[0]]


def _related_load(model: ModuleModel, write: DbWrite, scope: cst.CSTNode) -> cst.CSTNode | None:
    """Where the function reaches a related row through another record's relation, loaded then
    by the ORM without a lock: a name bound once to it (`product = instance.product`). Not one
    the object holds (`self.product`): a caller may hold its lock."""
    instance = write.instance or ""
    if instance.startswith("self.") or instance == "self":
        return None
    bound = model.bindings_of(scope, instance)
    value = bound[0].value if len(bound) == 1 else None
    owner = model.dotted(value) if type(value) is cst.Attribute else None
    return value if owner is not None and not owner.startswith("self.") else None


def _tallied_in_a_loop(model: ModuleModel, read: DbRead, write: DbWrite, scope: cst.CSTNode) -> bool:
    """The write is in a loop the load is outside of (`job = Job.objects.get(...)`, then `for row in
    rows: ... job.saved += 1`): a count the run keeps of what it did."""
    for ancestor in model.ancestors(write.node):
        if ancestor is scope:
            return False
        if isinstance(ancestor, (cst.For, cst.While)) and not model.is_inside(read.call, ancestor):
            return True
    return False


def built_columns(model: ModuleModel, write: DbWrite) -> tuple[str, ...]:
    """The columns an attribute write computes from their own old value."""
    if write.kind != "attribute":
        return ()
    return tuple(c for c in write.sets if _builds_on(model, write, c))


def _builds_on(model: ModuleModel, write: DbWrite, column: str) -> bool:
    """`x.n += 1`, `x.n = x.n - amount`: a sum with the column's own value as a term (not text
    marked, `x.name += "-old"`, nor a merge, `x.tags |= {...}`)."""
    statement = write.statement
    if isinstance(statement, cst.AugAssign):
        return isinstance(statement.operator, (cst.AddAssign, cst.SubtractAssign)) and not is_text(
            model, statement.value
        )
    value = write.values.get(column)
    return value is not None and _sums(model, value, column, write.instance)


# conversions that keep a quantity what it is: `Decimal(wallet.balance) + amount`
_NUMBER_CALLS = frozenset({"Decimal", "int", "float"})


def _sums(model: ModuleModel, value: cst.BaseExpression, column: str, instance: str | None, depth: int = 0) -> bool:
    """A sum with the column's own value as a term, also through a number conversion
    (`Decimal(x.n) + 1`), either branch of a conditional (`x.n + a if deposit else x.n - a`), or
    a name bound once to one (`new = x.n - a; x.n = new`)."""
    if type(value) is cst.IfExp:
        return any(_sums(model, v, column, instance, depth) for v in (value.body, value.orelse))
    if type(value) is cst.Name and depth < 2:
        bound = model.bindings_of(model.scope_of(value), value.value)
        return (
            len(bound) == 1 and bound[0].value is not None and _sums(model, bound[0].value, column, instance, depth + 1)
        )
    if type(value) is not cst.BinaryOperation or type(value.operator) not in (cst.Add, cst.Subtract):
        return False
    if is_text(model, value):
        return False
    return any(
        _is_column(model, term, column, instance) or _sums(model, term, column, instance, depth)
        for term in (value.left, value.right)
    )


def _is_column(model: ModuleModel, term: cst.BaseExpression, column: str, instance: str | None, depth: int = 0) -> bool:
    """`x.n`, `Decimal(x.n)`, or a name bound once to one (`old = x.n`)."""
    if type(term) is cst.Call and term.args and (model.call_name(term) or "").rsplit(".", 1)[-1] in _NUMBER_CALLS:
        term = term.args[0].value
    if type(term) is cst.Name and depth < 2:
        bound = model.bindings_of(model.scope_of(term), term.value)
        value = bound[0].value if len(bound) == 1 else None
        return value is not None and _is_column(model, value, column, instance, depth + 1)
    return type(term) is cst.Attribute and term.attr.value.lower() == column and model.dotted(term.value) == instance


def accumulates(model: ModuleModel, value: cst.BaseExpression, column: str, instance: str | None) -> bool:
    """Arithmetic on the column's old value: `x.n + 1`, `F("credits") - amount`. Reading the
    old value to normalise it (`x.book = x.book.edition`) or another object's attribute of
    the same name (`x.connector = self.connector`) gives the same result on every run."""
    for node in (value, *model.iter_nodes(value)):
        if type(node) is not cst.BinaryOperation:
            continue
        if type(node.operator) is cst.Add and (is_text(model, node.left) or is_text(model, node.right)):
            continue  # `x.name + suffix`: text marked, not a quantity added to
        for operand in (node.left, node.right, *model.iter_nodes(node)):
            if type(operand) is cst.Attribute and operand.attr.value.lower() == column:
                owner = model.dotted(operand.value)
                if instance is None or owner == instance:
                    return True
            if type(operand) is cst.SimpleString and (string_value(operand) or "").lower() == column:
                return True  # F("credits")
    return False


# calls that give text: `str(x)`, `"...".format(...)`, `when.strftime(...)`, `", ".join(...)`
TEXT_CALLS = frozenset({"str", "format", "strftime", "isoformat", "join"})


def is_text(model: ModuleModel, expr: cst.BaseExpression, depth: int = 0) -> bool:
    """A value that is text by what it is: a string literal, an f-string, a call that gives text
    (`when.strftime("-deleted-at-%s")`), a sum with text in it, or a name bound to one of these."""
    if isinstance(expr, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)):
        return True
    if isinstance(expr, cst.Call):
        return (model.call_name(expr) or "").rsplit(".", 1)[-1] in TEXT_CALLS
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        return is_text(model, expr.left, depth) or is_text(model, expr.right, depth)
    if isinstance(expr, cst.Name) and depth < 3:
        bound = model.bindings_of(model.scope_of(expr), expr.value)
        return any(b.value is not None and is_text(model, b.value, depth + 1) for b in bound)
    return False
