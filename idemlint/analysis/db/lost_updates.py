"""Lost updates: a column written from its own value as an unlocked read loaded it
(`coupon.used += 1; coupon.save()`, `wallet.balance = wallet.balance - amount`). No test
decides the write, but two overlapping runs both read the old value and both write it plus
their change: one change is lost (a coupon used past its limit, stock sold twice). The value
is one the function loaded (a query, `get_object_or_404`, a row `get_or_create` found or made, a
load on one branch beside a row made on the other) or a related row it reaches through
a record's relation to a model of the project (`product = line.product`): the value the
arithmetic builds on is what this run saw. A lock on the read (or on the record the related row
was reached through, or one every caller takes), or a write the ORM makes at the version it
read, keeps it safe."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import chain_model, full_chain, locks
from idemlint.analysis.db.records import BUILT, DbRead
from idemlint.analysis.db.scopes import source_order
from idemlint.analysis.flow import on_another_way, only_when, origin_nodes
from idemlint.analysis.model import called_name, class_attributes, keyword, string_value
from idemlint.knowledge.orms import is_row_base
from idemlint.knowledge.repeats import CREATE_IF_ABSENT_METHODS

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
    from idemlint.analysis.flow import reached_from, runs_before

    if write.instance is None:
        return None
    columns = built_columns(model, write)
    if not columns:
        return None
    scope = model.scope_of(write.node)
    loads = [
        r
        for r in (*db.reads, *_found_or_made(model, write, scope))
        if not r.record
        and same_record(r, write)
        and model.scope_of(r.call) is scope
        and (runs_before(model, r.call, write.node) or reached_from(model, r.call, write.node))
    ]
    if not loads:
        related = _related_load(model, db, write, scope)
        loads = [related] if related is not None else []
    for read in reversed(loads):
        if _tallied_in_a_loop(model, read, write, scope):
            return None  # the run's own tally over its work, saved as it goes: not another run's change lost
        if (
            write.kind == "attribute"
            and not saves_the_column(model, write, columns[0], scope)
            or _not_a_field(model, read.table, columns[0])
        ):
            return None  # `save(update_fields=[...])` without it, or an attribute the model does not store
        if read.record:
            return read, _written_value(write, columns), columns
        if (
            is_locked(model, db, read)
            or row_locked_first(model, db, read, write.node)
            or locked_together(model, read, write)
        ):
            return None
        if latest_binding_is(model, write, read) or _still_holds(model, write, read, scope):
            return read, _written_value(write, columns), columns
    return None


def _found_or_made(model: ModuleModel, write: DbWrite, scope: cst.CSTNode) -> Iterator[DbRead]:
    """`row, created = Counter.objects.get_or_create(...)`: the row a run finds is loaded as a
    query loads it (made, it is new; found, another run may hold the same old value); not for a
    write under `if created:`, which only the run that made it takes."""
    for binding in model.bindings_of(scope, write.instance or ""):
        call = binding.value
        if binding.kind != "unpack" or type(call) is not cst.Call or type(call.func) is not cst.Attribute:
            continue
        statement = binding.statement
        pair = statement.targets[0].target if type(statement) is cst.Assign and len(statement.targets) == 1 else None
        first = pair.elements[0].value if type(pair) is cst.Tuple and pair.elements else None
        created = pair.elements[1].value if type(pair) is cst.Tuple and len(pair.elements) == 2 else None
        if (
            call.func.attr.value in CREATE_IF_ABSENT_METHODS
            and type(first) is cst.Name
            and first.value == write.instance
            and not (type(created) is cst.Name and only_when(model, write.node, created.value))
        ):
            chain = full_chain(model, call)
            yield DbRead(call, chain_model(model, chain), locks(chain), (), write.instance)


def _still_holds(model: ModuleModel, write: DbWrite, read: DbRead, scope: cst.CSTNode) -> bool:
    """The name still holds the row the read bound it to when the write runs: every other
    binding of it between the two runs only on another way than the read's (`if absent: row =
    make()` / `else: row = load()`, or made in the handler of the `try` that loads it)."""
    binding = model.statement_of(read.call)
    position = source_order(model, scope)
    start, at = position.get(binding, -1), position.get(write.statement, 0)
    between = [
        b
        for b in model.bindings_of(scope, write.instance or "")
        if start < position.get(b.statement, -1) < at and b.statement is not binding
    ]
    return (
        read.instance == write.instance
        and any(b.statement is binding for b in model.bindings_of(scope, write.instance or ""))
        and all(on_another_way(model, read.call, b.statement) for b in between)
    )


def _written_value(write: DbWrite, columns: tuple[str, ...]) -> cst.BaseExpression:
    statement = write.statement
    if write.call is not None and write.kind == "setter":
        return write.call  # the call of the function that does the sum
    return statement.value if isinstance(statement, cst.AugAssign) else write.values[columns[0]]


def _related_load(model: ModuleModel, db: DbAnalysis, write: DbWrite, scope: cst.CSTNode) -> DbRead | None:
    """A related row the function reaches through another record's relation, loaded then by the
    ORM without a lock: a name bound once to `owner.attr` (or `owner.a.attr`) where `attr` names
    a model of the project (`product = instance.product`, `Product` a model), or the chain
    written in place (`instance.user.profile.uploads += 1`). Not one the object holds
    (`self.product`), nor one whose owner the function loaded under a lock (its joined rows may
    be locked with it). Its origin is the owner's: a parameter's callers may hold the lock."""
    instance = write.instance or ""
    if instance.startswith("self.") or instance == "self":
        return None
    bound = model.bindings_of(scope, instance)
    if len(bound) == 1:
        held = bound[0].value
        if not isinstance(held, cst.Attribute):
            return None
        value, owner = held, (model.dotted(held) or "").split(".", 1)[0]
        if not owner or owner == "self":
            return None
    else:
        reached = _reached_in_place(model, write, instance, scope)
        if reached is None:
            return None
        value, owner = reached, instance.split(".", 1)[0]
    attribute = value.attr.value
    if not _names_a_model(model, db, attribute):
        return None
    if any(r.instance == owner and r.locked and model.scope_of(r.call) is scope for r in db.reads):
        return None
    parameters = {p.name.value for p in getattr(scope, "params", cst.Parameters()).params}
    return DbRead(
        value, attribute.lower(), False, instance=instance, record="parameter" if owner in parameters else "related"
    )


def _reached_in_place(model: ModuleModel, write: DbWrite, instance: str, scope: cst.CSTNode) -> cst.Attribute | None:
    """`instance.user.profile` in `instance.user.profile.uploads += 1`: a related row written
    through the chain that reaches it, with no name bound to it. Its load is the chain's first
    use in the function. Not a chain the function assigns itself (`order.customer = locked`,
    `order.invoice = Invoice.objects.create(...)`), nor a write in a loop (the run's own tally
    over its work: where the row was first loaded is not known)."""
    if "." not in instance or any(
        isinstance(a, (cst.For, cst.While)) for a in model.ancestors(write.node, until=scope)
    ):
        return None
    assigned = {model.dotted(t) for t, _value, _statement in model.attribute_assigns if model.scope_of(t) is scope}
    if any(prefix and (instance + ".").startswith(prefix + ".") for prefix in assigned):
        return None  # `order.customer = Customer.objects.select_for_update().get(...)`: not a lazy load
    uses = [node for node in model.iter_nodes(scope) if type(node) is cst.Attribute and model.dotted(node) == instance]
    order = source_order(model, scope)
    return min(uses, key=lambda node: order.get(node, 0)) if uses else None


def _names_a_model(model: ModuleModel, db: DbAnalysis, attribute: str) -> bool:
    """`product_variant` names `ProductVariant`, a class of the module or the project built on a model base."""
    wanted = attribute.replace("_", "").lower()  # `userprofile` names `UserProfile` too

    def is_model(bases: Iterable[str]) -> bool:
        return any(is_row_base(b) for b in bases)

    for owner in model.classes:
        if owner.name.value.lower() == wanted:
            return is_model(model.dotted(b.value) or "" for b in owner.bases)
    project = getattr(db, "project", None)
    classes = project.classes if project is not None else {}
    return any(
        name.rsplit(".", 1)[-1].lower() == wanted and is_model(bases) for name, (bases, _methods) in classes.items()
    )


def saves_the_column(model: ModuleModel, write: DbWrite, column: str, scope: cst.CSTNode) -> bool:
    """The first save of the instance after the write stores the column: not one that names
    other fields only (`save(update_fields=["status"])`). A commit or a helper persists it whole."""
    from idemlint.analysis.db.scopes import persist_calls, source_order

    start = source_order(model, scope).get(write.statement, 0)
    saves = [
        (index, call)
        for index, owner, method, call in persist_calls(model, scope)
        if index > start and owner == write.instance and method in ("save", "asave")
    ]
    fields = keyword(min(saves, key=lambda s: s[0])[1], "update_fields") if saves else None
    if fields is None or not isinstance(fields.value, (cst.List, cst.Tuple)):
        return True
    named = {(string_value(e.value) or "").lower() for e in fields.value.elements}
    return column in named or "" in named


def _not_a_field(model: ModuleModel, table: str | None, column: str) -> bool:
    """The module defines the model (`class Coupon(models.Model)`, on a model base alone) and
    it declares no such field: an attribute kept in memory, not a column."""
    for owner in model.classes:
        if table is None or owner.name.value.lower() != table.replace("_", ""):
            continue
        if not owner.bases or not all(is_row_base(model.dotted(b.value) or "") for b in owner.bases):
            return False  # fields may come from a base declared elsewhere
        fields = {name.lower() for name in class_attributes(owner)}
        return bool(fields) and column not in fields
    return False


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
    """The columns an attribute write computes from their own old value, or a call of a
    function that does so on the instance handed to it (`account.add_credits(n)`)."""
    if write.kind == "setter":
        return tuple(c for c, (kind, _text) in write.sets.items() if kind == BUILT)
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


# calls that copy a collection or build one from it: `list(x.tags)`, `copy.copy(x.tags)`,
# `filter(keep, x.tags)`
COLLECTION_COPIES = frozenset(
    {"copy", "list", "set", "dict", "tuple", "sorted", "frozenset", "deepcopy", "filter", "map"}
)


def edits_its_collection(model: ModuleModel, value: cst.BaseExpression, column: str, instance: str | None) -> bool:
    """The value written is the column's own collection copied and edited (`squads =
    x.squads.copy(); squads.remove(s); x.squads = squads`, `x.squads[:]`, `[*x.squads, s]`,
    `{**x.settings, k: v}`, `[s for s in x.squads if s != u]`, `filter(..., x.squads)`): it
    builds on the old value, so two runs editing different items lose one edit."""
    if instance is None:
        return False

    def old(node: cst.BaseExpression) -> bool:  # `x.tags`, `x.tags[:]`, `x.settings.items()`
        if type(node) is cst.Subscript and _whole_slice(node):
            node = node.value
        elif type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in _VIEWS:
            node = node.func.value
        return _is_column(model, node, column, instance)

    for node in origin_nodes(model, value):
        if type(node) is cst.Call:
            copied = (
                called_name(node) == "copy"
                and old(node)
                or called_name(node) in COLLECTION_COPIES
                and any(old(a.value) for a in node.args)
            )
        elif type(node) in (cst.StarredElement, cst.StarredDictElement):
            copied = old(node.value)  # type: ignore[attr-defined]
        elif type(node) in (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp):
            copied = old(node.for_in.iter)  # type: ignore[attr-defined]
        else:
            copied = type(node) is cst.Subscript and old(node)
        if copied:
            return True
    return False


def _whole_slice(node: cst.Subscript) -> bool:
    """`x.tags[:]`: a copy of the whole (not `x.password[:-4]`, text cut from what was read)."""
    if len(node.slice) != 1 or type(node.slice[0].slice) is not cst.Slice:
        return False
    part = node.slice[0].slice
    return part.lower is None and part.upper is None and part.step is None


# a collection's views, read to rebuild it
_VIEWS = frozenset({"items", "values", "keys", "copy"})


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
