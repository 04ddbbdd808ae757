"""IDM102: an update whose affected-row count nobody reads, so a duplicate delivery cannot be
told from the first."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint.analysis.db import DbWrite, count_conditions, races
from idemlint.analysis.db.counts import nobody_acts_on
from idemlint.analysis.db.preconditions import refuses_a_repeat
from idemlint.analysis.db.side_effects import act_after, nodes_after, quiet_call
from idemlint.analysis.direct_facts import dropped_counts, returns_write_results
from idemlint.analysis.model import called_name, local_callee
from idemlint.analysis.summaries import chain_origin, related_steps, via
from idemlint.knowledge.orms import DJANGO, QUEUES_A_CALL, RUNS_A_FUNCTION_LATER, SQLALCHEMY
from idemlint.knowledge.repeats import names_an_action, words_of
from idemlint.knowledge.triggers import DATABASE, UPDATE
from idemlint.rule import Report, Rule
from idemlint.rules.data_wording import lower_confidence, sql_placeholder

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.project_index import ProjectIndex
    from idemlint.config import Config
    from idemlint.context import FileContext
else:
    from idemlint._lazy import LazyModule

    cst = LazyModule("libcst", globals(), "cst")


class IgnoredUpdateCount(Rule):
    code = "IDM102"
    stakes_follow_effects = True
    confidence = "medium"
    name = "ignored-update-count"
    summary = "A conditional UPDATE runs and its affected-row count is never read."
    what_it_does = (
        "Flags a conditional UPDATE (its WHERE or `.filter(...)` constrains more than the row's identity: a state, "
        "flag, version or timestamp column, or a literal) whose affected-row count is never read afterwards in "
        "the function: `cursor.rowcount`, `result.rowcount`, the return value of `QuerySet.update()` or "
        "`Query.update()`, asyncpg's status string, or rows from `RETURNING`. The update must write a column it "
        "tests (`filter(pk=i, status=DRAFT).update(published_at=None)` leaves the row a draft: a duplicate matches "
        "it again and its count is the first one's, so reading it tells nothing). With `all-updates-need-count = true` "
        "every UPDATE is checked. Not reported: an update whose ranges are on the column it moves by its own "
        "value, over rows not named by their own key, bounded on both sides or moved away from its one bound "
        '(`filter(group=g, position__gt=p).update(position=F("position") + 1)`, a reorder; the step on either side, read '
        "with its sign; the ORM's `F()` form only, not SQL's `SET position = position + 1`): its count is how many "
        "rows moved. Moved toward its one bound it spends what the bound guards (`balance__gte=amount` with "
        '`F("balance") - amount`): a claim, reported. `filter(pk=i, stock__gt=0)` with '
        "a decrement names one row and is a claim. Nor is an update over rows not named by their own key that only "
        "sets the flags it filters on to `True`, `False` or `None` (`filter(course=c, is_active=False)."
        "update(is_active=True)`), or fills a column it finds empty with a value the same on every run "
        "(`filter(serial=s, removed_at__isnull=True).update(removed_at=now)`, `WHERE delay IS NOT NULL` with `SET "
        "delay = NULL`; not a module's constant such as `worker=WORKER_ID`, a claim), with nothing after it that acts: a "
        "second run finds nothing to do and leaves what the first left. Nor is an update that retires the rows of a "
        "group holding a value, not rows named by their own key (`filter(email=e, is_used=False).update(is_used=True)`, "
        "`status__in=[PENDING, SENT]` to EXPIRED), before the function gives that value to a row (it inserts into the "
        "same table, or sets the column on a record): a duplicate retires what the first run installed and installs "
        "its own, whatever follows. Nor is an update over the rows of a group of a model the project "
        "defines, named by no key it keeps unique (`BedUse.objects.filter(stay=s, ended_at__isnull=True).update("
        "ended_at=t)`, the other valid codes of a person), whatever follows: its count is how many rows the group held, "
        "and zero is a normal answer (no bed was open), so branching on it would skip the work when the group was "
        "empty; rows named again by what the function read from a row of the same table (`filter(email=r.email, "
        'status=PENDING)` after `r = Reminder.objects.get(id=i)`), a spend (`balance=F("balance") - amount`) and a '
        "version compare stay claims. Tests inside a subquery (`AND EXISTS (SELECT 1 FROM plan p WHERE p.status = 'late')`) or a "
        "computed value are on other rows, not conditions of the update. Nor is an update "
        "with nothing after it that acts, what it returns included, in a function a framework runs "
        "(`@shared_task`, `@receiver(...)`, `@app.post(...)`, a view: the request first, and a view class's "
        "method named for what it handles (`post`, `destroy`, `@action`), or a public function its module "
        "never calls that returns only responses), or in a function that hands its caller nothing and writes "
        'only values that are the same on every run (`status="closed"`, `timezone.now()`, a constant): '
        "zero rows change nothing that follows it. Such a helper is reported where it is called instead, when "
        "the caller acts after the call (`close_session(pk)` then `send_receipt(...)`), in this module or, "
        "with the project index, another. An update that stores what its caller brings (`holder=worker_id`, "
        '`stock=F("stock") - 1`) is a claim its caller must know it lost, and a version condition the update '
        "bumps (an optimistic lock) tells a stale writer its write was lost: both are still reported. What "
        "acts is a call after the write on its way on (not in another branch, not in the handler of a `try` "
        "that holds it), other than logging, serialising (`json.dumps`), a getter, a read through a query chain "
        "(`session.query(Flavor).filter_by(**f).one()`), a response, or a repeat-safe write (a removal, a create-if-absent, a queryset `update()` to fixed values). The in-memory "
        "twin is reported too: a state setter that every definition in the project guards but that returns, as a "
        "move made returns, when the record holds the state asked for already (`if new == self.status: return`), "
        "called on a record the function loaded, with a call after it that acts: an outside effect idemlint knows (an HTTP write, an SDK's, "
        "a `side-effect-calls` one), a call named for an act or a message (`send_receipt`, `notify_customer`, "
        "`sendmail`, `task.delay`), a lambda handed to `on_commit` that does one, or a project function with "
        "an outside effect (not a move through a setter, an `idempotent-calls` one, a repeat-safe request such as a "
        "PUT, a response, a computation such "
        "as `validate_email`), and nothing that turns a repeat of the value away first (a read filtered on the "
        "state, a lock or claim won first, a test that leaves when the record holds the value already: `if "
        "order.status == PAID: return`, `if order.status != PENDING: raise`; not one that refuses another state, "
        "`if order.status == CANCELLED: return`, locked or not): `order.set_status(PAID)` then `send_receipt(order)`; a duplicate delivery acts again."
    )
    why = (
        'Zero rows is how a conditional write says "this was a duplicate" (or "someone else got there first"). '
        "Ignoring it means the code after the UPDATE (the email, the ledger entry, the next API call) runs for "
        "the duplicate too."
    )
    fix_hint = "Read the count and branch: `if cur.rowcount == 0: return  # duplicate` (Django: `if not qs.update(...)`; asyncpg: `status == 'UPDATE 0'`)."
    known_problems = (
        "Whether a predicate is identity or condition is judged by column name (`id`, `*_id`, `tenant`, `customer` "
        "are identity) and by comparison with a literal. A count read in another function is not seen. A helper "
        "that drops its count is followed one call up only: a caller that calls it and then returns to a caller "
        'that acts is not seen. A reorder that closes a gap below one bound (`position__gt=p` with `F("position") - 1`) '
        "is taken for a claim and reported."
    )
    bad = """\
def mark_paid(conn, order_id, mailer):
    cur = conn.cursor()
    cur.execute("UPDATE orders SET status = 'paid' WHERE id = %s AND status = 'pending'", (order_id,))
    conn.commit()
    mailer.send_receipt(order_id)
"""
    good = """\
def mark_paid(conn, order_id, mailer):
    cur = conn.cursor()
    cur.execute("UPDATE orders SET status = 'paid' WHERE id = %s AND status = 'pending'", (order_id,))
    if cur.rowcount == 0:
        conn.rollback()
        return  # duplicate delivery: already paid, the receipt went out
    conn.commit()
    mailer.send_receipt(order_id)
"""
    how_to_fix = (
        ("DB-API / psycopg / sqlite3", "`if cur.rowcount == 0: return`."),
        ("asyncpg", "`status = await conn.execute(...)`; `if status == 'UPDATE 0': return`."),
        ("Django", "`if not Order.objects.filter(pk=pk, status='pending').update(status='paid'): return`."),
        ("SQLAlchemy", "`if session.execute(stmt).rowcount == 0: return`."),
    )
    fix_safety = (
        "No automatic fix. A generated `if cur.rowcount == 0: pass` skeleton would keep behaviour and change "
        "nothing; what a duplicate should do (return early, skip the side effect, report a conflict) is the "
        "author's decision, and a placeholder would only hide the finding."
    )
    triggers = (UPDATE, DATABASE)
    skips_migrations = True
    needs_project = True
    project_facts = ("returns_count", "drops_count")
    project_groups = frozenset({0, 1})

    @classmethod
    def wanted(cls, lowered_source: str, config: Config, project: ProjectIndex | None = None) -> bool:
        """Also a file that calls a setter quiet on a repeat (`.set_status(`): it may drop its answer."""
        return super().wanted(lowered_source, config, project) or (
            project is not None
            and any(f".{name.lower()}(" in lowered_source for name in project.repeat_skipping_setters)
        )

    def check(self, ctx: FileContext) -> Iterator[Report]:
        db = ctx.db
        every = ctx.config.all_updates_need_count
        for write in db.writes:
            if write.count_read:
                continue
            conditions = count_conditions(ctx.model, db, write, every)
            if conditions is None:
                continue
            if conditions and not every and nobody_acts_on(ctx.model, write, conditions):
                continue  # nothing after it acts and nothing is handed back: zero rows change nothing (callers are judged)
            if conditions:
                what = ", ".join(sorted({p.column for p in conditions}))
                message = f"{write.described()} is conditional on {what} but its affected-row count is never read"
            else:
                message = (
                    f"{write.described()} writes without reading its affected-row count "
                    "(`all-updates-need-count` asks for it on every update)"
                )
            yield Report(write.statement, message, suggestion=_count_hint(ctx, write), confidence=lower_confidence(ctx))
        yield from self._dropped_counts(ctx)
        yield from _repeats_it_cannot_tell(ctx)

    def _dropped_counts(self, ctx: FileContext) -> Iterator[Report]:
        """`claim(order_id)` as a statement, where `claim` returns a conditional update's
        row count (in this module or, with the project index, another): the caller drops
        what says whether this delivery was a duplicate. And `close(pk)`, where `close` runs
        one and hands back nothing, followed here by a call that acts: it acts for a duplicate too."""
        if not _count_returned_here_or_named(ctx):
            return  # no callee can return a count: the module's summaries are not built for nothing
        for call in ctx.model.calls:
            parent = ctx.model.parents.get(call)
            if isinstance(parent, cst.Await):
                parent = ctx.model.parents.get(parent)
            if not isinstance(parent, cst.Expr):
                continue
            callee = ctx.callee(call)
            if callee is None:
                continue
            act = None
            if callee.summary.returns_count is not None:
                chain = callee.summary.returns_count
            elif callee.summary.drops_count is not None:
                chain = callee.summary.drops_count
                if _count_read_after(ctx, parent):
                    continue  # `mark(cur, pk)`, then `if cur.rowcount == 0:`: the caller reads it
                act = act_after(ctx.model, parent, quiet=lambda node: _computes_only(ctx, node))
                if act is None:
                    continue  # nothing here acts after it: a duplicate's zero rows change nothing
            else:
                continue
            origin, lines = chain_origin(chain, "update")
            what = f"{chain[-1].text} ({origin}{via(chain)})"
            if act is None:
                message = f"{callee.name}() returns the affected-row count of {what} but the count is dropped here"
                suggestion = f"Branch on it: `if not {callee.name}(...): return  # duplicate`."
            else:
                message = (
                    f"{callee.name}() runs {what} and drops its affected-row count; "
                    f"{called_name(act) or 'the call'}() on line $act then acts for a duplicate too"
                )
                suggestion = f"Return the count from {callee.name}() and branch on it: `if not {callee.name}(...): return  # duplicate`."
                lines = (*lines, ("act", act))
            yield Report(
                parent,
                message,
                suggestion=suggestion,
                lines=lines,
                related=related_steps(callee, chain, verb="runs"),
                confidence=lower_confidence(ctx),
            )


def _repeats_it_cannot_tell(ctx: FileContext) -> Iterator[Report]:
    """`order.set_status(PAID)` on an order loaded here, where every way `set_status` is defined
    guards the move but returns, as a move made returns, when the order is PAID already; then a
    call that acts. The in-memory twin of a dropped row count: a duplicate delivery acts again.
    Not where the function turns a repeat away first (a precondition, or any test of the state:
    `if order.status == PAID: return`), nor where IDM101 reports the write or its answer is used."""
    skipping, model, db = ctx.project.repeat_skipping_setters, ctx.model, ctx.db
    racy = races(model, db) if skipping else {}
    for write in db.writes if skipping else ():
        func = write.call.func if write.call is not None else None
        if write.kind != "setter" or not isinstance(func, cst.Attribute) or func.attr.value not in skipping:
            continue
        statement = model.parents.get(write.call)  # type: ignore[arg-type]
        if not isinstance(statement, cst.Expr) or id(write) in racy:
            continue  # its answer is used; IDM101 reports it
        column, (kind, text) = next(iter(write.sets.items()))
        if refuses_a_repeat(ctx, write, column, kind, text):
            continue
        record = write.instance

        act = act_after(model, statement, quiet=lambda node: not _announces_or_acts(ctx, node))
        if act is None:
            continue
        spelt = text if kind == "constant" else repr(text)
        yield Report(
            statement,
            f"{write.described()} returns as if done when {record} is {spelt} already, so "
            f"{called_name(act) or 'the call'}() on line $act acts again for a duplicate delivery",
            suggestion=f"Have {func.attr.value}() say whether it moved the record (return False, or raise, on a "
            f"repeat) and branch on it: `if not {record}.{func.attr.value}(...): return  # duplicate`.",
            lines=(("act", act),),
            confidence=lower_confidence(ctx),
        )


# a call's first word when it tells someone or starts work elsewhere (`notify_owner`, not
# `validate_email`); the queue's own calls are knowledge/orms.QUEUES_A_CALL (`task.delay()`, not
# `compute_retry_delay()`) and Celery's `app.send_task(name, ...)`
_TELLS = frozenset({"notify", "mail", "email", "sendmail", "sms", "message", "enqueue", "schedule", "dispatch"})


def _announces_or_acts(ctx: FileContext, call: cst.Call) -> bool:
    """A call a duplicate must not repeat: an outside effect idemlint knows (an HTTP write, an
    SDK's, a configured `side-effect-calls` one), one named for an act or a message
    (`send_receipt`, `notify_customer`, `task.delay`, `create_invoice`), work handed on in a
    lambda to run after the commit (`on_commit(lambda: fulfil.delay(pk))`), or a project function with an
    outside effect; not a move of a record through a setter (`order.set_status(SHIPPED)`: IDM103
    judges it), a call configured as `idempotent-calls`, a response, or a computation
    (`format_date(...)`, `validate_email(...)`)."""
    model = ctx.model
    name = model.call_name(call) or ""
    called = call.func.attr.value if isinstance(call.func, cst.Attribute) else name.rsplit(".", 1)[-1]
    if model.vocabulary.is_state_setter(called) or model.vocabulary.declared_idempotent(
        name, model.dotted(call.func) or name
    ):
        return False
    effect = ctx.effects.by_call.get(call)
    if effect is not None:
        return not effect.retry_safe  # a PUT, a DELETE, a create-if-absent leaves what the first left
    if called in _DEFERS and call.args and isinstance(call.args[0].value, cst.Lambda):
        return any(
            type(node) is cst.Call and _announces_or_acts(ctx, node) for node in model.iter_nodes(call.args[0].value)
        )
    words = words_of(called)
    if called in QUEUES_A_CALL or called == "send_task" or words[:1] and words[0] in _TELLS or names_an_action(called):
        return True
    callee = ctx.callee(call)
    return callee is not None and callee.summary.effect is not None


# calls that run the function they are given later (after the commit, on a thread)
_DEFERS = frozenset({"on_commit", *RUNS_A_FUNCTION_LATER})


def _count_returned_here_or_named(ctx: FileContext) -> bool:
    """Whether a call here may run a function that returns a row count: one of this module's
    functions returns a write's result, or the source names a project function that does."""
    if returns_write_results(ctx.model) or dropped_counts(ctx.model, lambda: ctx.db):
        return True
    lowered = ctx.source.lower()  # by the bare name: a call may be spelt `claim (order_id)`
    names = ctx.project.function_names("returns_count") | ctx.project.function_names("drops_count")
    return any(name in lowered for name in names)


def _count_read_after(ctx: FileContext, statement: cst.CSTNode) -> bool:
    """A `rowcount` read after the call: the helper ran its update on a cursor the caller holds."""
    return any(
        type(node) is cst.Attribute and node.attr.value == "rowcount" for node in nodes_after(ctx.model, statement)
    )


def _computes_only(ctx: FileContext, call: cst.Call) -> bool:
    """A project function that acts on nothing a duplicate could repeat: one of this module whose
    body calls nothing that acts (`total(pk)`, another converging update), or one elsewhere that
    only drops a count of its own."""
    function = local_callee(ctx.model, call)
    if function is not None:
        return not any(
            type(node) is cst.Call and not quiet_call(ctx.model, node) for node in ctx.model.iter_nodes(function.body)
        )
    callee = ctx.callee(call)
    return callee is not None and callee.summary.drops_count is not None and callee.summary.effect is None


def _count_hint(ctx: FileContext, write: DbWrite) -> str:
    if write.kind == DJANGO:
        return "Branch on the count: `if not Order.objects.filter(...).update(...): return  # duplicate`."
    if write.kind == SQLALCHEMY:
        return "Branch on the count: `if session.execute(update(...)...).rowcount == 0: return  # duplicate`."
    if "$1" == sql_placeholder(ctx, write):
        return "Branch on the status: `if await conn.execute(...) == 'UPDATE 0': return  # duplicate`."
    return "Branch on the count: `if cur.rowcount == 0: return  # duplicate` (roll back first if nothing else ran)."
