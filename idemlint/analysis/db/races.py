"""IDM101's decision: writes decided in Python by an unlocked read of the same record, with no
re-check in the write itself, less those that converge (two runs write the same thing) and
have no side effect; plus rows chosen by a state filter and written by id alone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import full_chain
from idemlint.analysis.db.changes import records_a_change
from idemlint.analysis.db.decisions import (
    decided_columns,
    decides_state,
    decisions,
    latest_binding_is,
)
from idemlint.analysis.db.drawn_rows import another_instance, reads_choosing_the_rows
from idemlint.analysis.db.locks import is_locked, locked_together, row_locked_first
from idemlint.analysis.db.lost_updates import accumulates, edits_its_collection, is_text, lost_update
from idemlint.analysis.db.object_records import assignments_to
from idemlint.analysis.db.records import FIXED_VALUE_KINDS, VERSION_COLUMNS, DbRead, DbWrite, reads_the_record
from idemlint.analysis.db.scopes import source_order
from idemlint.analysis.db.side_effects import apart, side_effect_in
from idemlint.analysis.flow import line_of, origin_nodes, runs_before
from idemlint.analysis.model import ModuleModel, method_of, string_value
from idemlint.analysis.retry.exits import always_leaves
from idemlint.knowledge.orms import DJANGO, SQLALCHEMY

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db.classify import DbAnalysis
else:
    cst = LazyModule("libcst", globals(), "cst")


@dataclass(frozen=True)
class Race:
    read: DbRead
    test: cst.BaseExpression
    columns: tuple[str, ...]  # the columns the decision looked at
    # no test decides: the write computes the column from its unlocked value (`x.n += 1`), a lost update
    computed: bool = False


def races(model: ModuleModel, db: DbAnalysis) -> dict[int, Race]:
    """Writes (by id of DbWrite) decided in Python by an unlocked read of the same record,
    with no re-check in the write itself: IDM101's findings, also used to keep IDM103 quiet."""
    memo = model.memo.setdefault("db.races", {})  # per analysis: a file may have two (summaries', rules')
    cached: dict[int, Race] | None = memo.get(id(db))
    if cached is not None:
        return cached
    found: dict[int, Race] = {}
    for write in db.writes:
        for read, test in decisions(model, db, write):
            columns = decided_columns(model, test, read)
            if not decides_state(columns) or is_locked(model, db, read) or _rechecks(db, write, columns):
                continue
            if _compares_and_sets(model, write, read):
                continue  # `filter(id=p.id, next_at=p.next_at).update(...)`: it writes only the row as it was read
            if row_locked_first(model, db, read, write.node):
                continue
            if locked_together(model, read, write):
                continue  # decided and written under a lock every run takes: a duplicate waits, then reads
            if _same_queryset(model, read, write) and any(p.column in columns for p in read.filters):
                continue  # `qs.count()` then `qs.update(...)`: the update runs the read's filter again
            if another_instance(model, read, write):
                continue  # `filter(id=copy.id).update(...)` after reading `original`: another row
            if write.kind == "attribute" and not latest_binding_is(model, write, read):
                continue  # the variable was rebound (a created object) between the read and the write
            if _set_before(model, read, test, columns):
                continue  # `self.order = fresh.order` before `if self.order == order:`: not the loaded value
            found[id(write)] = Race(read, test, columns)
            break
    for write in db.writes:
        if id(write) not in found:
            race = _selected_by_state(model, db, write)
            if race is None and (lost := lost_update(model, db, write)) is not None:
                race = Race(*lost, computed=True)  # no test decides: the write adds to its unlocked value
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
        for write in writes:  # each write with what its own run does: a sibling branch's act is not its
            together = [w for w in writes if not apart(model, w.node, [write])]
            changed = all(records_a_change(model, db, race.test, w) for w in together)  # `if new != x.email:`
            if (changed or all(_converges(model, db, race, w) for w in together)) and not side_effect_in(
                model, db, race.test, [write], writes, changed
            ):
                del found[id(write)]
    memo[id(db)] = found
    return found


def _set_before(model: ModuleModel, read: DbRead, test: cst.BaseExpression, columns: tuple[str, ...]) -> bool:
    """Every column the test looks at was assigned on the instance earlier in the function, on
    every way to the test, from something other than the instance itself (`self.order =
    fresh.order`, not `x.n -= amount` or `x.due = x.next_due()`): the test reads what the
    function put there, not a stale load."""
    if read.instance is None or not columns:
        return False
    scope = model.scope_of(test)
    order = source_order(model, scope)
    read_at = order.get(read.call, -1) if model.scope_of(read.call) is scope else -1  # after the load only
    reloads = [
        order.get(c, -1)
        for c in model.iter_nodes(scope)
        if type(c) is cst.Call and loads_again(model, c, read.instance)  # the scope's own calls, not the module's
    ]
    test_at = order.get(test, -1)
    read_at = max([read_at, *(at for at in reloads if at < test_at)])  # `self.refresh_from_db()` loads again
    assigned = {
        target.attr.value.lower()
        for target, value, statement in assignments_to(model, scope, read.instance)
        if not isinstance(statement, cst.AugAssign)
        and not reads_the_record(model, value, read.instance)
        and order.get(statement, -1) > read_at
        and runs_before(model, _past_guarded_try(model, statement), test)
    }
    return all(column in assigned for column in columns)


def loads_again(model: ModuleModel, call: cst.Call, instance: str) -> bool:
    """`order.refresh_from_db()`, `session.refresh(order)`: the instance is loaded again."""
    if type(call.func) is not cst.Attribute:
        return False
    method = call.func.attr.value
    if method in ("refresh_from_db", "arefresh_from_db"):
        return model.dotted(call.func.value) == instance
    return method == "refresh" and any(type(a.value) is cst.Name and a.value.value == instance for a in call.args)


def _past_guarded_try(model: ModuleModel, statement: cst.CSTNode) -> cst.CSTNode:
    """A statement straight in a `try` body whose handlers all leave (`except StopIteration:
    raise ...`) runs on every way past the `try`: judge it where the `try` stands."""
    line = line_of(model, statement)
    block = model.parents.get(line)
    owner = model.parents.get(block) if block is not None else None
    if isinstance(owner, cst.Try) and owner.body is block and owner.finalbody is None:
        if all(always_leaves(list(h.body.body)) for h in owner.handlers):
            return _past_guarded_try(model, owner)
    return statement


def _selected_by_state(model: ModuleModel, db: DbAnalysis, write: DbWrite) -> Race | None:
    """Rows chosen by a state filter, then written by id with no state condition:
    `ids = Order.objects.filter(status=UNCONFIRMED).values_list("pk")` then
    `Order.objects.filter(id__in=ids).update(status=EXPIRED)`. A row that changed state in
    between (or that an overlapping run already took) is written all the same."""
    if any(db.is_condition(p) for p in write.where):
        return None
    for read in reads_choosing_the_rows(model, db, write):
        if is_locked(model, db, read) or row_locked_first(model, db, read, write.node):
            continue
        if locked_together(model, read, write):
            continue  # chosen and written under a lock every run takes: an overlapping run waits or leaves
        columns = tuple(
            dict.fromkeys(  # `Q(status=A) | Q(status=B)`: one column, named once
                p.column
                for p in read.filters
                if p.column in write.sets and (db.is_state_column(p.column) or db.is_condition(p))
            )
        )
        if columns:
            return Race(read, read.call, columns)  # type: ignore[arg-type]
    return None


def _converges(model: ModuleModel, db: DbAnalysis, race: Race, write: DbWrite) -> bool:
    """Whether running the write twice leaves what running it once does: it sets a state
    column only to the value the test compared it with (`if x.status != v: x.status = v`),
    and other columns to anything that does not build on their old value (a flag, a
    timestamp, a lazily filled default; not `n -= 1`, `total = total + x` or a copy of the
    column's list with an item removed)."""
    if isinstance(write.statement, cst.AugAssign):
        return is_text(model, write.statement.value)  # `x.name += "-deleted"` only marks the text
    for column, value in write.values.items() or [(c, None) for c in write.sets]:
        if value is None:
            return False
        if db.is_state_column(column):
            if _value_key(model, value) not in compared_values(model, race.test, column) and not (
                write.sets.get(column, ("expr", ""))[0] in FIXED_VALUE_KINDS
                and _admits_named_states_only(model, race, write, column)
            ):
                return False
        elif accumulates(model, value, column, write.instance) or edits_its_collection(
            model, value, column, write.instance
        ):
            return False  # builds on the old value: `x.n = x.n + 1`, `F("credits") - amount`, a list edited
    return True


def _admits_named_states_only(model: ModuleModel, race: Race, write: DbWrite, column: str) -> bool:
    """The write runs only while the column is empty (`if not x.sent_at_state:`, `if x.state is
    None:`, or past `if x.state: return`), or, for a flag written True or False, only while it
    holds the other value (`if x.open: x.open = False`). Every run that passes fills or flips
    it to the one constant written, so a duplicate that passed as well writes the same. A test
    that names states (`if x.status == "pending": x.status = "paid"`) is not enough: another
    move out of that state (to cancelled) may come between, and the write overwrites it."""
    holds = _holds_when(model, race.test, write.node)
    if holds is None:
        return False
    flag = write.sets.get(column, ("expr", ""))[0] == "bool"
    joined = cst.And if holds else cst.Or  # what holds of each part: all of an `and`, none of an `or`
    return any(_pins(model, part, (write.instance, column), holds, flag) for part in _flattened([race.test], joined))


def _flattened(parts: list[cst.BaseExpression], joined: type) -> list[cst.BaseExpression]:
    found: list[cst.BaseExpression] = []
    for part in parts:
        if type(part) is cst.BooleanOperation and type(part.operator) is joined:
            found += _flattened([part.left, part.right], joined)
        else:
            found.append(part)
    return found


def _pins(model: ModuleModel, part: cst.BaseExpression, field: tuple[str | None, str], holds: bool, flag: bool) -> bool:
    """Whether `part`, being `holds`, pins the written record's column (`field`: the instance
    and the column; `order.state`, not `order.parent.state`) to empty (`not x.col`, `x.col is
    None` true; `x.col`, `x.col is not None` false), or a flag to one value (`x.col` either way)."""
    negated = type(part) is cst.UnaryOperation and type(part.operator) is cst.Not
    inner = part.expression if negated else part  # type: ignore[attr-defined]
    truth = holds != negated  # what `inner` is where the write runs
    if type(inner) is cst.Attribute:
        return _is_field(model, inner, field) and (flag or not truth)
    if type(inner) is not cst.Comparison or len(inner.comparisons) != 1 or not _is_field(model, inner.left, field):
        return False
    comparison = inner.comparisons[0]
    if type(comparison.comparator) is not cst.Name or comparison.comparator.value != "None":
        return False
    operator = type(comparison.operator)
    return operator in ((cst.Is, cst.Equal) if truth else (cst.IsNot, cst.NotEqual))


def _is_field(model: ModuleModel, node: cst.BaseExpression, field: tuple[str | None, str]) -> bool:
    return (
        type(node) is cst.Attribute
        and node.attr.value.lower() == field[1]
        and field[0] is not None
        and model.dotted(node.value) == field[0]
    )


def _holds_when(model: ModuleModel, test: cst.BaseExpression, node: cst.CSTNode) -> bool | None:
    """Whether `test` is true where `node` runs: in the body of its `if` (True), in its `else`
    or past an earlier `if` whose body leaves (False); None where unknown."""
    owner = model.parents.get(test)
    if type(owner) is not cst.If:
        return None
    if model.is_inside(node, owner.body):
        return True
    if owner.orelse is not None and model.is_inside(node, owner.orelse):
        return False
    return False if always_leaves(list(owner.body.body), or_continues=True) else None


def _value_key(model: ModuleModel, expr: cst.BaseExpression) -> str | None:
    text = string_value(expr)
    if text is not None:
        return repr(text)
    if isinstance(expr, (cst.Integer, cst.Float)):
        return expr.value
    return model.dotted(expr)


def compared_values(model: ModuleModel, test: cst.BaseExpression, column: str, follow: bool = True) -> set[str | None]:
    """What a test compares `column` with: `x.status != "paid"` gives {'paid'}; also through a
    method or property of the class the test is written in (`if self.ready_to_be_published:`,
    whose `return self.status in (PENDING, UNPUBLISHED)` compares the state)."""
    found: set[str | None] = set()
    for returned in _own_checks(model, test) if follow else ():
        found |= compared_values(model, returned, column, follow=False)
    for node in (test, *model.iter_nodes(test)):
        if type(node) is not cst.Comparison:
            continue
        sides = [node.left, *(c.comparator for c in node.comparisons)]
        if any(type(s) is cst.Attribute and s.attr.value.lower() == column for s in sides):
            for side in sides:
                if type(side) is cst.Attribute and side.attr.value.lower() == column:
                    continue
                if isinstance(side, (cst.Tuple, cst.List, cst.Set)):  # `x.status in ("a", "b")`
                    found.update(_value_key(model, e.value) for e in side.elements)
                else:
                    found.add(_value_key(model, side))
    found.discard(None)
    return found


def _own_checks(model: ModuleModel, test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What the methods of the enclosing class that `test` reads on `self` return (and the
    values those returns were computed from): `self.ready_to_be_published`, `self.can_pay()`."""
    owner = model.enclosing_class(test)
    if owner is None:
        return []
    found: list[cst.BaseExpression] = []
    for node in (test, *model.iter_nodes(test)):
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":
            method = method_of(owner, node.attr.value)
            for ret in model.returns.get(method, ()) if method is not None else ():
                if ret.value is not None:
                    found += [
                        ret.value,
                        *(n for n in origin_nodes(model, ret.value) if isinstance(n, cst.BaseExpression)),
                    ]
    return found


def tested_before(
    model: ModuleModel, deciding: list[tuple[DbRead, cst.BaseExpression]], write: DbWrite, column: str, written: str
) -> cst.BaseExpression | None:
    """A test on the record's current `column` against some state other than the one written
    (`if challenge.status != PENDING: raise`), or one that lets the write run only while the
    column is empty (`if not session.status:`), made in Python before the write: a precondition
    the write does not repeat. One that only skips a write already done (`if status ==
    APPROVED: return`) is none, nor one the write runs past whatever the column holds."""
    for read, test in deciding:
        if compared_values(model, test, column) - {written}:
            return test
        if write.sets.get(column, ("", ""))[0] != "bool" and _admits_named_states_only(
            model, Race(read, test, (column,)), write, column
        ):
            return test
    return None


def _same_queryset(model: ModuleModel, read: DbRead, write: DbWrite) -> bool:
    """The read and the update both go through one queryset variable (`qs = M.objects.filter(...)`;
    `qs.exists()` / `qs.count()`; `qs.update(...)`): the database applies its filter again."""
    if write.kind != DJANGO or write.call is None or not isinstance(write.call.func, cst.Attribute):
        return False
    updated = write.call.func.value
    call = read.call
    read_from = call.func.value if isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) else None
    return (
        isinstance(updated, cst.Name)
        and isinstance(read_from, cst.Name)
        and updated.value == read_from.value
        and model.scope_of(updated) is model.scope_of(read_from)
        and len(model.bindings_of(model.scope_of(updated), updated.value)) == 1
    )


def _rechecks(db: DbAnalysis, write: DbWrite, columns: tuple[str, ...]) -> bool:
    conditions = [p for p in write.where if db.is_condition(p)]
    if not conditions:
        return False
    if not columns or "*" in columns:
        return True
    return any(p.column in columns for p in conditions) or any(VERSION_COLUMNS.match(p.column) for p in conditions)


def _compares_and_sets(model: ModuleModel, write: DbWrite, read: DbRead) -> bool:
    """An update whose filter holds a column it sets to the value this run read of it (Django's
    `filter(id=p.id, next_report_date=p.next_report_date).update(next_report_date=...)`, also
    through the query's name; SQLAlchemy's `filter_by(remaining_uses=remaining)` or
    `filter(Trust.remaining_uses == remaining)`, `remaining` bound once to what the read gave),
    whose count the function reads: an optimistic lock, which another writer's change makes
    match no row, and the run that loses learns it. Not where the record is loaded again first
    (`refresh_from_db()`): the filter then holds the later value."""
    if write.kind not in (DJANGO, SQLALCHEMY) or write.call is None or read.instance is None or not write.count_read:
        return False
    scope = model.scope_of(write.node)
    if any(type(n) is cst.Call and loads_again(model, n, read.instance) for n in model.iter_nodes(scope)):
        return False
    return any(
        column in write.sets and _holds_what_was_read(model, value, read.instance, column)
        for link in full_chain(model, write.call)
        if link is not write.call
        for column, value in _pinned_columns(link)
    )


def _pinned_columns(link: cst.Call) -> list[tuple[str, cst.BaseExpression]]:
    """What a filter of the chain pins each column to: `filter(col=v)`, `get(col=v)`,
    `filter_by(col=v)`, `filter(Model.col == v)`, `where(Model.col == v)`."""
    name = link.func.attr.value if isinstance(link.func, cst.Attribute) else ""
    if name not in ("filter", "get", "filter_by", "where"):
        return []
    pinned = [(a.keyword.value, a.value) for a in link.args if a.keyword is not None]
    for arg in link.args:
        test = arg.value
        if (
            arg.keyword is None
            and isinstance(test, cst.Comparison)
            and len(test.comparisons) == 1
            and isinstance(test.comparisons[0].operator, cst.Equal)
            and isinstance(test.left, cst.Attribute)
        ):
            pinned.append((test.left.attr.value, test.comparisons[0].comparator))
    return pinned


def _holds_what_was_read(model: ModuleModel, value: cst.BaseExpression, instance: str, column: str) -> bool:
    """`p.next_report_date`, or a name bound once to it (`remaining = row.remaining_uses`)."""
    if isinstance(value, cst.Name) and (bound := model.sole_value(value)) is not None:
        value = bound
    return model.dotted(value) == f"{instance}.{column}"
