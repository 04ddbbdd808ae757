"""Whether a write's affected-row count says something a caller must read.

Zero rows is how a conditional write says "a duplicate" or "someone else got there first".
IDM102 asks this of every write whose count a function drops; the function summaries ask it
of a write a function returns (`return Order.objects.filter(..., status="pending").update(...)`),
so a caller that drops the returned count is judged like the write itself.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint.analysis.db.chains import admitted_values, chain_calls, full_chain, kwarg_predicates
from idemlint.analysis.db.records import FIXED_VALUE_KINDS, OWN_KEYS, VERSION_COLUMNS
from idemlint.analysis.db.repeat_safe import absolute_value
from idemlint.analysis.db.side_effects import answers_after, effect_after
from idemlint.analysis.flow import reached_from, runs_before
from idemlint.analysis.model import iter_nodes, local_callee, positional_parameters, string_value
from idemlint.analysis.unique_keys import kept_unique
from idemlint.knowledge.orms import DJANGO
from idemlint.knowledge.roles import (
    ENTRY_DECORATORS,
    ENTRY_SUFFIX,
    ENTRY_VERBS,
    VIEW_CLASS,
    VIEW_DECORATORS,
    VIEW_METHODS,
    VIEW_REQUEST_PARAMETER,
    VIEW_RESPONSE,
)

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db.classify import DbAnalysis
    from idemlint.analysis.db.records import DbWrite
    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.sql import Predicate
else:
    from idemlint._lazy import LazyModule

    cst = LazyModule("libcst", globals(), "cst")


def count_conditions(model: ModuleModel, db: DbAnalysis, write: DbWrite, every: bool = False) -> list[Predicate] | None:
    """The conditions whose zero-row answer the write's count carries, or None when the
    count says nothing a reader must act on. With `every` (`all-updates-need-count`) every
    UPDATE's count matters, conditional or not (then the list may be empty)."""
    if write.kind == "attribute":
        return None
    conditions = [p for p in write.where if db.is_condition(p)]
    if every:
        return conditions
    if conditions and _updates_a_group(model, db, write, conditions):
        return None  # `filter(consultation=c, end_date__isnull=True).update(end_date=d)`: zero rows, none was open
    if conditions and _keeps_extreme(model, write, conditions) and not effect_after(model, write):
        return None  # `filter(pk=i, created__gt=v).update(created=v)` and nothing else: keeps the min
    if conditions and _supersedes(model, db, write, conditions):
        return (
            None  # `filter(user=u, is_main=True).update(is_main=False)`, then one made main: a duplicate does the same
        )
    if conditions and _sets_flags(model, db, write, conditions) and not effect_after(model, write):
        if not answers_after(model, write, literal_only=True):  # `return True`: the caller takes it for "done"
            return None  # `filter(is_active=False).update(is_active=True)` and nothing else: set twice, set once
    if conditions and _shifts_a_range(write, conditions):
        return None  # `filter(group=g, position__gt=p).update(position=F("position") - 1)`: a reorder
    if conditions and not _moves_what_it_matches(write, conditions) and not _sets_unseen(write):
        return None  # `filter(pk=i, status=DRAFT).update(published_at=None)`: a duplicate matches the same rows
    if not conditions or not db.is_guarded_write(write):
        return None
    return conditions


def _updates_a_group(model: ModuleModel, db: DbAnalysis, write: DbWrite, conditions: list[Predicate]) -> bool:
    """The update names no row by a key the project's model keeps unique: it closes or
    retires what a group of rows holds (`filter(consultation=c, end_date__isnull=True)`, the
    other valid tokens of a person, the unused codes of an order). How many rows it changed is
    how many the group held, and zero is a normal answer (no bed was open), not "a duplicate".
    Still a claim: a state moved with an act after it (`filter(order_id=o, status=AUTHORIZED)
    .update(status=CAPTURED)`, then `gateway.capture(o)`), unless the update spares the one row
    the function works on (`.exclude(code=used)`: the others are retired); rows named again by
    what the function read from a row of the same table (`filter(email=r.email, ...)` after `r =
    Reminder.objects.get(id=i)`); a value recomputed from the rows' own (`F("balance") -
    amount`); a version compare."""
    keys = db.project.unique_keys.get((write.table or "").lower())
    named = _named_columns(model, write)
    if keys is None or named is None:
        return False  # a model the project does not define, or a condition built elsewhere: a key may be named
    keys = (*keys, *(frozenset({own}) for own in OWN_KEYS))
    chosen, spared = named
    if kept_unique(keys, chosen):
        return False  # `filter(pk=i, ...)`, `filter(code=c, redeemed=False)` on a unique code: one named row
    moves_a_state = any(db.is_state_column(p.column) for p in conditions)
    if moves_a_state and not kept_unique(keys, spared) and effect_after(model, write):
        return False  # `status=AUTHORIZED` to CAPTURED, then the capture: a duplicate captures again
    if any(_recomputed_from_itself(write, column) for column in write.sets):
        return False
    if any(VERSION_COLUMNS.match(p.column) and p.column in write.sets for p in conditions):
        return False
    return not _names_a_row_read(model, db, write)


def _named_columns(model: ModuleModel, write: DbWrite) -> tuple[list[str], list[str]] | None:
    """The columns the update's rows are chosen by equality on, and those an `exclude()` spares,
    through a queryset held in a variable too; None where the columns are not all seen
    (`filter(**criteria)`, `filter(Q(...))`, `filter(conditions)`)."""
    if write.call is None or write.kind != DJANGO:
        return [p.column for p in write.where if p.op in ("eq", "in")], []
    links = [
        (link, link.func.attr.value)
        for link in full_chain(model, write.call)
        if isinstance(link.func, cst.Attribute) and link.func.attr.value in ("filter", "exclude")
    ]
    if any(arg.keyword is None for link, _ in links for arg in link.args):
        return None
    found: tuple[list[str], list[str]] = ([], [])
    for link, method in links:
        into = found[1] if method == "exclude" else found[0]
        into.extend(p.column for p in kwarg_predicates(model, link) if p.op in ("eq", "in"))
    return found


def _names_own_rows(write: DbWrite) -> bool:
    """The WHERE names rows by their own key (`pk=i`)."""
    return any(p.op == "eq" and p.column.split(".")[-1] in OWN_KEYS for p in write.where)


def _names_a_row_read(model: ModuleModel, db: DbAnalysis, write: DbWrite) -> bool:
    """A filter value of the update is a column of a row the function loaded from the same table
    (`a.user_email`, with `a = OfferAssignment.objects.get(id=i)`): it names that row again."""
    table = (write.table or "").lower()
    scope = model.scope_of(write.node)
    loaded = {
        read.instance
        for read in db.reads
        if read.instance and (read.table or "").lower() == table and model.scope_of(read.call) == scope
    }
    if not loaded or write.call is None:
        return False
    return any(
        isinstance(arg.value, cst.Attribute) and model.dotted(arg.value.value) in loaded
        for link in full_chain(model, write.call)
        if link is not write.call
        for arg in link.args
        if arg.keyword is not None
    )


def _moves_what_it_matches(write: DbWrite, conditions: list[Predicate]) -> bool:
    """The update changes what makes a row match, so a duplicate matches nothing: it writes a
    column of its conditions, or sets one its WHERE matches by equality to a fixed value
    (`filter(token=t, status="active").update(token=None)`: the token is spent)."""
    if any(_writes_column(write, p.column) for p in conditions):
        return True
    return any(
        p.op == "eq"
        and _writes_column(write, p.column)
        and write.sets.get(p.column, ("", ""))[0] in ("literal", "constant", "null", "bool")
        for p in write.where
    )


def _writes_column(write: DbWrite, column: str) -> bool:
    """The update sets `column`, a foreign key by either name (`state` and `state_id`)."""
    key = column.removesuffix("_id")
    return any(written == column or written.removesuffix("_id") == key for written in write.sets)


def _sets_unseen(write: DbWrite) -> bool:
    """What the update sets is not all written out here, and may be what it tests:
    `.update(**changes)`, `query.update(changes)`, `.values({"paid_at": now, **changes})`, SQL
    built at run time (`"UPDATE ... SET {} = %s".format(column)`, an f-string)."""
    call = write.call
    if not write.sets or call is None:
        return not write.sets
    if write.kind == "sql":
        sql = call.args[0].value if call.args else None
        return not isinstance(sql, (cst.SimpleString, cst.ConcatenatedString))
    if not (isinstance(call.func, cst.Attribute) and call.func.attr.value in ("update", "values")):
        return False
    return any(
        a.star == "**"
        or a.keyword is None
        and not (isinstance(a.value, cst.Dict) and all(isinstance(e, cst.DictElement) for e in a.value.elements))
        for a in call.args
    )


def _supersedes(model: ModuleModel, db: DbAnalysis, write: DbWrite, conditions: list[Predicate]) -> bool:
    """The update retires the rows of a group that hold a value (`filter(email=e, is_used=False)
    .update(is_used=True)`, `status__in=[PENDING, SENT]` to EXPIRED, the other main addresses),
    not rows named by their own key, then the function, on every way on from it, gives that
    value to a row: it inserts into the same table, or sets the column on a record to a value
    the filter admitted (`address.is_main = True`). A duplicate retires what the first run
    installed and installs its own, and how many rows it retired says nothing."""
    from idemlint.analysis.db.absent_rows import inserts_in

    if write.table is None or write.call is None or _names_own_rows(write):
        return False
    retired = {
        p.column
        for p in conditions
        if _writes_column(write, p.column) and write.sets.get(p.column, ("", ""))[0] in FIXED_VALUE_KINDS
    }
    admitted = admitted_values(model, write.call)
    if not retired:
        return False
    code = model.module.code_for_node
    if any(
        other.kind == "attribute"
        and any(c in other.values and code(other.values[c]) in admitted.get(c, ()) for c in retired)
        and runs_before(model, write.node, other.node)
        for other in db.writes
    ):
        return True
    table = write.table.lower()
    scope = model.scope_of(write.node)
    return any(
        inserted == table and reached_from(model, write.node, insert) for insert, inserted in inserts_in(model, [scope])
    )


def _sets_flags(model: ModuleModel, db: DbAnalysis, write: DbWrite, conditions: list[Predicate]) -> bool:
    """Every condition is on a flag or an emptiness (not a state column) that the update sets
    once and for all: a flag to `True`, `False` or `None`, a column found empty
    (`removed_at__isnull=True`, `WHERE delay IS NOT NULL`) to a fixed value or the clock; over
    rows not named by their own key, and every value set is the same on every run (SQL computed
    from the rows themselves counts). A second run finds nothing to do and leaves what the first
    left: a sweep, whose zero rows say nothing unless something after the update acts."""
    if _names_own_rows(write):
        return False  # `filter(pk=i, locked=False).update(locked=True)`: one named row claimed, a lock
    if not all(absolute_value(model, value) for value in write.values.values()):
        return False  # `balance=F("balance") + 100` alongside: a second run adds again
    if write.kind == "sql" and any(k == "param" or _SQL_PLACEHOLDER.search(t) for k, t in write.sets.values()):
        return False  # `SET holder = %s`, `= '{worker}'`, `= lower($1)`: what the caller brings, a claim
    return all(not db.is_state_column(p.column) and _set_once(model, write, p) for p in conditions)


_SQL_PLACEHOLDER = re.compile(r"\?|(?<!:):\w|@\w|\$\d|__hole__")  # as sqlglot writes placeholders back


def _set_once(model: ModuleModel, write: DbWrite, condition: Predicate) -> bool:
    """The update sets the condition's column to a value the same on every run (that it no
    longer meets the condition is assumed, as `isnull=True` then a value is written): a flag to `True`/`False`/`None`; a column tested for emptiness to a
    literal or the clock (`removed_at=now`, `NULL`), not a constant the module names, which may
    be the process's own (`worker=WORKER_ID` claims the rows)."""
    value = write.values.get(condition.column)
    if value is not None:
        flag = type(value) is cst.Name and value.value in ("True", "False", "None")
        named = type(value) is cst.Name and value.value.isupper() or type(value) is cst.Attribute
        # not a name of the module's (`WORKER_ID`: this process's own, a claim)
        return flag or condition.op == "is" and absolute_value(model, value) and not named
    kind, text = write.sets.get(condition.column, ("", ""))
    if kind in ("bool", "null"):
        return True
    return condition.op == "is" and (kind in FIXED_VALUE_KINDS or _SQL_CLOCK.match(text) is not None)


def _shifts_a_range(write: DbWrite, conditions: list[Predicate]) -> bool:
    """Every condition is a range on a column the update recomputes, bounded by values the code
    computed, and none of the rows is named by its own key: the update moves the rows in a range
    (a reorder), and its count is how many moved, not whether a duplicate lost. Bounded on both
    sides, or on one side with the rows moved away from the bound (`position__gt=p` with
    `F("position") + 1`: they still match, so a duplicate's count is the first one's). Moved
    toward it (`balance__gte=amount` with `F("balance") - amount`, `taken__lt=capacity` with
    `+ 1`) the update spends what the bound guards: a claim. `filter(pk=i, stock__gt=0)` names
    one row: its decrement is a claim."""
    if not all(p.op in ("lt", "gt") and _recomputed_from_itself(write, p.column) for p in conditions):
        return False
    if any(p.value not in ("expr", "param") for p in conditions):
        return False  # a literal floor (`uses_left__gt=0`): a claim
    if {p.op for p in conditions} != {"lt", "gt"} and not all(_moves_away(write, p) for p in conditions):
        return False  # bounded on one side, and moved toward it: a claim
    return not _names_own_rows(write)


def _moves_away(write: DbWrite, condition: Predicate) -> bool:
    """`F("col") + k` (or `k + F("col")`) under a lower bound (`col__gt`), `F("col") - k` under
    an upper one; a negative step (`F("col") + -1`) moves the other way, and `k - F("col")`
    mirrors the column rather than moving it."""
    value = write.values.get(condition.column)
    if not isinstance(value, cst.BinaryOperation) or not isinstance(value.operator, (cst.Add, cst.Subtract)):
        return False

    def is_column(expr: cst.BaseExpression) -> bool:
        return isinstance(expr, cst.Call) and any(string_value(a.value) == condition.column for a in expr.args)

    adds = isinstance(value.operator, cst.Add)
    if is_column(value.left):
        step = value.right
    elif adds and is_column(value.right):
        step = value.left
    else:
        return False
    negative = isinstance(step, cst.UnaryOperation) and isinstance(step.operator, cst.Minus)
    return (adds != negative) == (condition.op == "gt")


def _recomputed_from_itself(write: DbWrite, column: str) -> bool:
    """`position=F("position") + 1`: the new value is the column's own, moved (a lease's
    `expires_at=now + ttl` is not)."""
    value = write.values.get(column)
    return value is not None and any(
        isinstance(node, cst.SimpleString) and string_value(node) == column for node in iter_nodes(value)
    )


def _keeps_extreme(model: ModuleModel, write: DbWrite, conditions: list[Predicate]) -> bool:
    """A min/max update: every condition compares a column with the very value the write
    sets it to (`created__gt=v` with `created=v`), so zero rows means "already earlier",
    not "a duplicate". A lease claim (`expires_at__lt=now` setting `now + ttl`) is not one."""
    if write.call is None or not all(p.op in ("lt", "gt") for p in conditions):
        return False
    code = model.module.code_for_node
    filters = {
        arg.keyword.value.lower().split("__")[0]: code(arg.value)
        for link in chain_calls(write.call)
        for arg in link.args
        if arg.keyword is not None and "__" in arg.keyword.value and link is not write.call
    }
    values = {column: code(value) for column, value in write.values.items()}
    return all(p.column in values and filters.get(p.column) == values[p.column] for p in conditions)


def nobody_acts_on(model: ModuleModel, write: DbWrite, conditions: list[Predicate]) -> bool:
    """The count is dropped where nothing can act on it: nothing after the write in its function
    acts, and the function hands its caller no answer after it (a framework runs it, or it
    returns nothing and writes only values that are the same on every run: a row moved to
    `closed` stays closed), so a duplicate's zero rows change nothing that follows here. A caller
    that acts after calling such a function is reported at its call (`drops_count`). A version
    condition (an optimistic lock) still tells a stale writer that its write was lost."""
    if any(VERSION_COLUMNS.match(p.column) and p.column in write.sets for p in conditions):
        return False  # compare and bump: an optimistic lock (not a release's `version="3.12"`)
    if effect_after(model, write):
        return False
    function = model.enclosing_function(write.node)
    if function is not None and is_entry_point(model, function):
        return True
    if not writes_fixed_values(model, write):
        return False  # `stock=F("stock") - 1`, `holder=worker_id`: a claim whose caller must know it lost
    return function is None or not answers_after(model, write)


def writes_fixed_values(model: ModuleModel, write: DbWrite) -> bool:
    """Every value the update sets is the same on every run: a literal, a constant, `None`, the
    clock (`timezone.now()`, SQL's `NOW()`); not a parameter (`holder=%s`), not arithmetic on
    the column (`stock = stock - 1`), not values the reading cannot see (`update(**changes)`)."""
    if not write.sets:
        return False
    for column, (kind, text) in write.sets.items():
        value = write.values.get(column)
        if value is not None:
            if not absolute_value(model, value):
                return False
        elif kind not in FIXED_VALUE_KINDS and not _SQL_CLOCK.match(text):
            return False
    return True


_SQL_CLOCK = re.compile(r"(?i)^(now\(\)|current_timestamp(\(\))?|current_date|localtimestamp)$")


def is_entry_point(model: ModuleModel, function: cst.FunctionDef) -> bool:
    """A function a framework runs (a task, a signal receiver, a route, a view), so no caller
    in the project is handed what it returns."""
    return any(_runs_as_entry_point(model, d) for d in function.decorators) or _is_a_view(model, function)


def _is_a_view(model: ModuleModel, function: cst.FunctionDef) -> bool:
    """A Django or DRF view, which the framework calls with the request first: a method of a
    view class named for what it handles (`post`, `destroy`, `@action`), or a public function
    its module never calls that returns only responses (a helper that takes the request hands
    its outcome to a caller)."""
    if positional_parameters(model, function)[:1] != [VIEW_REQUEST_PARAMETER]:
        return False
    owner = model.enclosing_class(function)
    if owner is not None:
        return any(VIEW_CLASS.search(model.dotted(b.value) or "") for b in owner.bases) and (
            function.name.value in VIEW_METHODS
            or any(_last_name(model, _unwrapped(d)) in VIEW_DECORATORS for d in function.decorators)
        )
    if function.name.value.startswith("_") or any(local_callee(model, call) is function for call in model.calls):
        return False
    returned = [r.value for r in model.iter_nodes(function) if isinstance(r, cst.Return) and r.value is not None]
    return bool(returned) and all(
        isinstance(value, cst.Call) and VIEW_RESPONSE.match(_last_name(model, value.func)) for value in returned
    )


def _unwrapped(decorator: cst.Decorator) -> cst.BaseExpression:
    """`@action(detail=True)` -> `action`."""
    node = decorator.decorator
    return node.func if isinstance(node, cst.Call) else node


def _last_name(model: ModuleModel, node: cst.BaseExpression) -> str:
    return (model.dotted(node) or "").rpartition(".")[2]


def _runs_as_entry_point(model: ModuleModel, decorator: cst.Decorator) -> bool:
    receiver, _, last = (model.dotted(_unwrapped(decorator)) or "").rpartition(".")
    return last in ENTRY_DECORATORS or last.endswith(ENTRY_SUFFIX) or bool(receiver) and last in ENTRY_VERBS
