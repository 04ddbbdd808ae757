"""Whether a write of a state column is made only from the states it may follow: IDM103's
question, asked of one column of one write. The answers come from everywhere the project can
put a precondition: the write's own filter, a filtering manager, a locked or filtered read, a
test before the write (in the function, in a helper given the record, in every caller), a lock
or a claim won first."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint.analysis.db.callers import decided_by_its_callers, made_by_every_caller
from idemlint.analysis.db.decisions import (
    decisions,
    guarding_tests,
    loaded_read,
    moves_its_flag,
    validated_first,
    via_manager,
)
from idemlint.analysis.db.drawn_rows import chosen_under_a_lock
from idemlint.analysis.db.locks import claim_won_before, is_locked, lock_won_before, state_checked_under_a_lock
from idemlint.analysis.db.made_rows import keyed_on_a_row_made_here
from idemlint.analysis.db.races import compared_values, tested_before
from idemlint.analysis.db.records import VERSION_COLUMNS, DbRead, DbWrite
from idemlint.analysis.db.scopes import persisted_together
from idemlint.knowledge.states import PRIMARY_STATES

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.context import FileContext
else:
    from idemlint._lazy import LazyModule

    cst = LazyModule("libcst", globals(), "cst")


def precondition(ctx: FileContext, write: DbWrite, column: str, kind: str, text: str) -> tuple[bool, DbRead | None]:
    """Whether the write of `column` (to `text`, of `kind`) has a precondition on its current
    value or needs none (a record not loaded here may be new), and the read it was loaded by
    (None for a query's update, which loads nothing)."""
    model, db, filtering = ctx.model, ctx.db, ctx.project.manager_filters
    read = None
    if write.kind in ("attribute", "setter"):
        read = loaded_read(model, db, write)
        if read is None or read.locked and column in read.columns:
            return True, read  # not loaded here (may be new), or claimed by a locked filtered read
        if any(p.column == column or db.is_state_column(p.column) for p in write.where):
            return True, read  # `instance.save(expected_task_state=[None])`: the save compares and sets
        if any(p.column == column for p in read.filters) or via_manager(model, read.call, column, filtering):
            return True, read  # found only in the states its query (or its manager) names: a precondition
        if read.record and is_locked(model, db, read):
            return True, read  # written under a lock the function took (LOCK TABLE, FOR UPDATE)
        if decided_by_its_callers(model, read, write.node, ctx.project, ctx.retry.reruns_the_function(write.node)):
            return True, read  # locked, chosen by state or made just before by every caller; a row's first state
        if validated_first(model, read, write.node, column):
            return True, read  # a helper given (or giving back) the record tests its state first
    elif via_manager(model, write.call, column, filtering) or any(
        p.column == column or VERSION_COLUMNS.match(p.column) or moves_its_flag(write, p) for p in write.where
    ):
        return True, read  # a precondition on the state, a version, or a flag the write moves (`is_finished=False`)
    elif keyed_on_a_row_made_here(model, write.call) or handed_a_row_made_here(ctx, write):
        return True, read  # the row this function (or every caller) just inserted: only this run knows it
    elif chosen_under_a_lock(model, db, write, column):
        return True, read  # `select_for_update().filter(status=S)`, then `filter(id__in=ids).update(...)`
    if lock_won_before(model, write.node) or claim_won_before(model, db, write.node, write.instance):
        return True, read  # `if not acquire_lock(key): return` first: one run at a time gets here
    deciding = list(decisions(model, db, write))
    if state_checked_under_a_lock(model, db, deciding, write, column):
        return True, read  # its state checked under a row lock, or a lock every run takes
    if tested_before(model, deciding, write, column, repr(text) if kind == "literal" else text) is not None:
        return True, read  # `if c.status != PENDING: raise` first: a late message is refused (a racing one is IDM101's)
    return False, read


def handed_a_row_made_here(ctx: FileContext, write: DbWrite) -> bool:
    """A query's update keyed on the id every caller hands over from a row it just made
    (`task.delay(search_id=search.id)` after `Search.objects.create(...)`, then
    `Search.objects.filter(id=search_id).update(...)`), as a row loaded by that key is."""
    if not isinstance(write.call, cst.Call):
        return False
    keyed = DbRead(write.call, write.table, False, ())
    return made_by_every_caller(ctx.model, keyed, write.node, ctx.project, ctx.retry.reruns_the_function(write.node))


def refuses_a_repeat(ctx: FileContext, write: DbWrite, column: str, kind: str, text: str) -> bool:
    """Whether a repeat of the write (the column holds the value written already) is turned away
    before it: the record was found by its state, one run at a time gets through (a lock or a
    claim won first), a helper or every caller tests the state, or a test before the write leaves
    on the value written (`if order.status == PAID: return`, `if order.status != PENDING: raise`).
    A test that refuses another state (`if order.status == CANCELLED: return`) lets the repeat
    through, under a row lock or not; a test whose outcome cannot be told counts as a refusal."""
    model, db = ctx.model, ctx.db
    if write.kind in ("attribute", "setter"):
        read = loaded_read(model, db, write)
        if read is None or any(p.column == column for p in read.filters):
            return True
        if any(p.column == column or db.is_state_column(p.column) for p in write.where):
            return True  # the save expects a state: a repeat finds it moved, and the save raises
        if via_manager(model, read.call, column, ctx.project.manager_filters):
            return True
        if decided_by_its_callers(
            model, read, write.node, ctx.project, ctx.retry.reruns_the_function(write.node)
        ) or validated_first(model, read, write.node, column):
            return True
    if lock_won_before(model, write.node) or claim_won_before(model, db, write.node, write.instance):
        return True
    deciding = {id(test) for _read, test in decisions(model, db, write)}
    written = repr(text) if kind == "literal" else text
    for leaves, test in guarding_tests(model, write.node):
        if id(test) not in deciding:
            continue
        owner = model.parents.get(test)
        # the write runs when the test fails: past an `if` that leaves, or in the `else` of one that holds it
        runs_when_false = leaves or (isinstance(owner, cst.If) and not model.is_inside(write.node, owner.body))
        if _holds_when_repeated(model, test, column, written) in (None, runs_when_false):
            return True
    return False


def _same_state(a: str, b: str) -> bool | None:
    """Whether two spellings name one state: equal, or `'accepted'` and `RefundStatus.ACCEPTED`
    (its member's name); None when a literal and a constant cannot be matched that way."""
    if a == b or _member_name(a) == _member_name(b):
        return True
    quoted = (a[:1] in "'\"", b[:1] in "'\"")
    return None if quoted[0] != quoted[1] else False


def _member_name(value: str) -> str:
    return value.strip("'\"").rpartition(".")[2].lower()


def _holds_when_repeated(model: ModuleModel, test: cst.BaseExpression, column: str, written: str) -> bool | None:
    """Whether `test` is true while the column holds `written`, or None when that cannot be told
    (another operand, a call): `status == PAID` is, `status in (PENDING, FAILED)` is not."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _holds_when_repeated(model, test.expression, column, written)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left = _holds_when_repeated(model, test.left, column, written)
        right = _holds_when_repeated(model, test.right, column, written)
        if isinstance(test.operator, cst.And):
            return False if False in (left, right) else None if None in (left, right) else True
        return True if True in (left, right) else None if None in (left, right) else False
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return None
    values = compared_values(model, test, column, follow=False)
    if not values:
        return None
    operator = test.comparisons[0].operator
    matches = [_same_state(written, v) for v in values if v is not None]
    held = True if True in matches else None if None in matches else False
    if held is None:
        return None
    if isinstance(operator, (cst.Equal, cst.Is, cst.In)):
        return held
    if isinstance(operator, (cst.NotEqual, cst.IsNot, cst.NotIn)):
        return not held
    return None


def carried_companions(
    ctx: FileContext, judge: Callable[[DbWrite, str, str, str], tuple[bool, DbRead | None]]
) -> set[int]:
    """The writes of companion states (`return_status`) that a main state (`status`, `state`)
    moved under its precondition (`judge`) carries: set in the same statement or saved by the
    same save, or written on the same record past the main state's own precondition (a second
    save after the locked test). Not the other way round."""
    model, db = ctx.model, ctx.db
    mains = [
        (w, column, kind, text)
        for w in db.writes
        for column, (kind, text) in w.sets.items()
        if column in PRIMARY_STATES and kind in ("literal", "constant") and judge(w, column, kind, text)[0]
    ]
    together = {persisted_together(model, w) for w, *_ in mains}
    return {
        id(write)
        for write in db.writes
        if not set(write.sets) <= PRIMARY_STATES
        and (
            persisted_together(model, write) in together
            or write.kind == "attribute"
            and any(
                main.kind == "attribute"
                and main.instance == write.instance
                and model.scope_of(main.node) is model.scope_of(write.node)
                and judge(write, column, kind, text)[0]
                for main, column, kind, text in mains
            )
        )
    }
