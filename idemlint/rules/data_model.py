"""Family 1xx: writes that let a duplicate or late delivery act twice or move state back."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint.analysis.db import (
    DbRead,
    DbWrite,
    Race,
    claim_won_before,
    compared_values,
    decided_elsewhere,
    held_by_callers,
    made_by_every_caller,
    races,
    saved_at_its_version,
)
from idemlint.analysis.db.lost_updates import built_columns
from idemlint.analysis.db.preconditions import carried_companions, precondition
from idemlint.analysis.db.scopes import persisted_together
from idemlint.analysis.machines import Declared, backward_from, never_backward, predecessors, written_state
from idemlint.analysis.summary_records import Step
from idemlint.knowledge.http import is_response_status
from idemlint.knowledge.states import PRIMARY_STATES, STATE_COLUMNS
from idemlint.knowledge.triggers import DATABASE, DB_READ, DB_WRITE, RECORDS
from idemlint.rule import Report, Rule
from idemlint.rules.data_wording import (
    absence_reports,
    arithmetic_hint,
    condition_hint,
    lower_confidence,
    race_message,
    spelt_state,
)

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.config import Config
    from idemlint.context import FileContext
else:
    from idemlint._lazy import LazyModule

    cst = LazyModule("libcst", globals(), "cst")


class ReadDecideWrite(Rule):
    code = "IDM101"
    stakes_follow_effects = True
    confidence = "medium"
    name = "read-decide-write"
    summary = "A value read without a lock decides, in Python, whether the same record is written."
    what_it_does = (
        "Flags a write (an UPDATE, `QuerySet.update()`, SQLAlchemy `update()`, or an attribute assignment that a later "
        "`save()`/`commit()` persists) that an `if` on a value read from the same table or instance decides, when the "
        "read takes no row lock (`SELECT ... FOR UPDATE`, `select_for_update()`, `with_for_update()`) and runs under no "
        "lock every process honours over both read and write (`with advisory_lock(key):`, `with cache.lock(key):`; not "
        "`threading.Lock()`) and the write does not re-check the decision in its own WHERE/filter (`WHERE status = "
        "'created'`, `.filter(status=...)`, a version compare, a column it sets held to the value read, its count read: "
        "`.filter(pk=p.pk, due_at=p.due_at)`, SQLAlchemy's `.filter_by(uses=left)` with `left = row.uses`). A method of the class that only returns its own fields "
        "(`if new not in self.available_statuses():`), or other such methods (`def can_pay(self): return "
        "self.is_approved()`), reads those fields; a row found only while in a state (`order = "
        "Order.objects.filter(pk=pk, status='pending').first()`, then `if order:`) is decided by that state; a model "
        "method that sets its own state and saves (`order.ship()`, in this module or another) writes that state on the "
        "caller's instance, whose class is known from `Order.objects.get(...)`, `.first()`, `get_object_or_404(Order, "
        "...)` or a constructor; a function that sets the state of the instance it is given and saves it (`def "
        "mark_sending(n): n.status = 'sending'; n.save()`) writes that state on the caller's instance "
        "(`mark_sending(notification)`) as a model method does; a helper named for storing the instance it is given "
        "(`update_payment(payment)`, `save_order(order)`) persists it as `save()` would. A record the object holds in "
        "an attribute (`self.round` of a manager, `self.object` of a view, a related row) is read as a parameter is: "
        "loaded by whoever first used it, tested here from memory (also through locals read from it: `old = "
        "self.status; if new == old: return`); one the method loads into it (`self.order = "
        "Order.objects.get(...)`) is judged by that read; one the class (or a base of it in the module) only ever sets to a row loaded under a row lock (`self.payment = Payment.objects.filter(pk=pk).select_for_update()[0]` in its constructor) is read under that lock. A record a helper returns after loading it under a row lock "
        "(`def _get_for_update(pk): return Order.objects.select_for_update().get(pk=pk)`, in any module, or through "
        "another such helper; not one whose own transaction ends the lock) is read under it, unless the caller "
        "commits first. A record whose own row the function claimed first, by a conditional "
        "update whose zero count leaves (`claimed = X.objects.filter(pk=r.pk, status='queued').update(status="
        "'running')`, then `if not claimed: return`), is the winner's: what it then tests and writes there is not "
        "reported (nor by IDM103). A write that a row the database keeps unique is inserted "
        "before, on its way from the test (`seat.enrolment = Enrolment.objects.create(learner=..., course=...)`, "
        "`unique_together` covering the columns it names, by values a duplicate gives too: not `uuid4()` or the clock), "
        "is safe: a racing duplicate fails at the insert; so is a record every caller in the project hands over just "
        "after making it (`m = Message(subject=...); m.save(); m.send()`), unless something retries the write. It also "
        "flags a lost update, where no test decides but two overlapping runs both add to the same old value: a column "
        "of an instance the function loaded itself without a lock (also one `get_or_create` found or made, or one loaded on one branch and made on the other: `if absent: row = create(...)` / `else: row = get(...)`; also at a call of a function of the project that adds to a column of the instance it is given, or of its own, and saves it, `account.add_credits(n)`, unless it reads the row again first), or of a related row it reaches through a record's "
        "relation to a model of the project (`product = line.product`, or the chain itself: `instance.user.profile.uploads += 1`, the model's name matched whatever its case and underscores, `userprofile` or `user_profile` for `UserProfile`; where the record was not loaded under a lock "
        "and, passed in, not under one every caller takes), written as a sum with its own old value (`coupon.used += 1`, `wallet.balance = Decimal(wallet.balance) - amount`, through a name bound once to it), then stored by "
        "`save()` (not one whose `update_fields` leaves it out) or a commit; not an attribute the model declared in the module does not have, nor a count kept in a loop the load is outside of (the run's own tally, also where "
        'it is a shared stock). The help says to let the database add (`update(used=F("used") + 1)`). '
        "A change recorded is left alone: a test that a value given or looked up (not built from the row: `tags = [t for t in "
        "x.tags if t != tag]`) differs from a column that is no state, then a write of that very value (`if new_email != "
        "user.email: user.email = new_email`), with nothing else done but calls that pass the change on, named for setting, "
        "every argument the record, its key, the value or the column read back (`backend.update_email(user)`); another act "
        "(`reassign_orders(user)`, `update_stock(line.product_id, -delta)`) or a fixed value (`if x.plan != 'pro': x.plan = "
        "'pro'; mail(x)`) is still a decision. "
        "Writes that converge are left alone: racing runs that store the same values (a flag set, a field cleared, the value the test compared with, "
        "text marked from what was read such as `slug += '-deleted'`; not a copy of the column's list with an item "
        "removed, which two runs editing different items lose one edit of) and do nothing else (a call in a further test, "
        "`elif x.count_reviews() >= n:`, only decides; a call named for reading or choosing whose result only the writes and their tests read, `chosen = select_file(members)`, computes the value (not `url = cloud.provision_database(...)`); one in the other branch of an `if` holding the write, `if "
        "enable: ...; issue_invoice() else: x.started_at = None`, outside a loop, is another run's), where what else they do is repeat-safe (a create-if-absent such "
        "as `get_or_create`, a removal or `soft_delete()`, a named resource torn down (`drop_database(name)`, "
        "`delete_bucket(name)`; not `remove_funds`), a queryset `update()` to absolute values, Django's `clean()`, a "
        "getter, a response or a record's data built (`jsonify(...)`, `entry.to_dict()`, a function of the module that "
        "only computes: `_token_to_dict(token)`, undecorated, returning a value and changing nothing it is given), the "
        "session's own queries and housekeeping (`db.query(...)`, `db.refresh(x)`, `db.rollback()` in a handler, on a "
        "session the function also commits or queries through; not `db.scalar(...)`, which runs any statement), a read whose answer is stored: "
        "`self.cached_permalink = client.chat_getPermalink(...)[...]`); so is a new instance (`self.model()`, `cls()`), and a copy: an instance whose key is cleared before the save "
        "that stores the write (`x.pk = None`, before or after the write: that save inserts a new row), "
        "and a test on columns the function set from elsewhere first (`self.order = fresh.order`; not `x.n -= amount`); "
        "and a method whose every caller in the project holds the row's lock around the call (after "
        "`select_for_update()`, also read in a `try` whose every handler leaves, or a row a locking getter gave, `Handler().get_for_update(pk)` or `get_table(pk, base_queryset=Table.objects.select_for_update())`; inside `with cache.lock(...)` or a lock decorator such as huey's `lock_task`), also a "
        "method of a name several classes define, where every call of the name is so made. An instance of a model whose "
        "ORM writes compare a version column (SQLAlchemy's `__mapper_args__ = {'version_id_col': ...}`, "
        "django-concurrency's `IntegerVersionField`), or a frappe document saved with `save()` (it compares the row's "
        "`modified` under a lock and refuses a stale save), is written only at the version it was read, so its "
        "assignments are not reported; a bulk `update()` of it still is. A record loaded with a lock by keyword "
        "(`frappe.get_doc(..., for_update=True)`) is read under that lock. A row the function inserts after a query "
        "found it absent (`if Vote.objects.filter(user=u, poll=p).exists(): return`, then `Vote.objects.create(...)`; "
        "`session.add(...)`; the query may go through a reverse manager a foreign key names, `copy.loans.filter(member=m)`, "
        "and the insert through a function of the project that inserts that model's row, `copy.lend_to(m)`, unless it "
        "takes the duplicate error itself) is the same race on a row that does not exist yet (the rule says low confidence; the "
        "shipped table measures this kind), reported for a model the project defines with no unique key on the queried "
        "columns nor on those the insert names (nor a primary key among them; a named `Index(name, *columns, "
        "unique=True)` keeps its columns unique, not one over an expression or with a condition), no lock on the query "
        "and no `except IntegrityError` around the insert; nor where the query is keyed on a row the function made (`o "
        "= X.objects.create()`, then `filter(x=o)`) and gave no task, or on a `post_save` receiver's `instance` under `if created:` (the insert that sent the signal made it): no other run can name it."
    )
    why = (
        "Two deliveries of the same message (a retry, a redelivered webhook, two workers) both read the old "
        "value, both pass the check, and both write and run the side effects that follow: the order is paid "
        "twice, the wallet debited twice. `transaction.atomic()` alone does not prevent it: at READ COMMITTED "
        "both transactions see the old row."
    )
    fix_hint = (
        "Put the condition in the write (`UPDATE ... SET status='paid' WHERE id=%s AND status='created'`, "
        "`.filter(pk=pk, status='created').update(...)`) and branch on its row count; or lock the row for the read."
    )
    known_problems = (
        "Reads and writes are matched by table or model name within one function; a read in one function that "
        "decides a write in another is not followed. Model names are compared loosely with table names (`Order` "
        "and `orders`). A version column quiets assignments only, not a model method's save (`order.ship()`)."
    )
    bad = """\
from shop.models import Order

def on_payment_succeeded(event):
    order = Order.objects.get(pk=event["order_id"])
    if order.status != "pending":
        return
    order.status = "paid"
    order.save(update_fields=["status"])
"""
    good = """\
from shop.models import Order

def on_payment_succeeded(event):
    updated = Order.objects.filter(pk=event["order_id"], status="pending").update(status="paid")
    if not updated:
        return  # duplicate delivery: already paid
"""
    how_to_fix = (
        (
            "DB-API",
            "`cur.execute(\"UPDATE orders SET status='paid' WHERE id=%s AND status='pending'\", (oid,))` then `if cur.rowcount == 0: return`.",
        ),
        (
            "Django",
            "`Order.objects.filter(pk=pk, status='pending').update(status='paid')` and branch on the count; or `select_for_update()` inside `transaction.atomic()`.",
        ),
        (
            "SQLAlchemy",
            "`session.execute(update(Order).where(Order.id == oid, Order.status == 'pending').values(status='paid')).rowcount`; or `with_for_update()` on the read.",
        ),
    )
    triggers = (DB_WRITE, (*DB_READ, *RECORDS, "objects."), (*DATABASE, *RECORDS))
    skips_migrations = True
    needs_project = True  # a model method that writes the state (`order.ship()`)
    project_facts = ("state_chain", "built_chain", "inserts_row")
    project_groups = frozenset({0})

    def check(self, ctx: FileContext) -> Iterator[Report]:
        from idemlint.analysis.db.absent_rows import unique_insert_first

        model, db = ctx.model, ctx.db
        found = races(model, db)
        seen: set[tuple[str | None, int]] = set()
        for write in db.writes:
            race = found.get(id(write))
            if race is None or held_by_callers(model, race.read.record, write.node, ctx.project.locked_by_callers):
                continue  # no race, or every caller holds the row's lock around the test and the write
            if (
                write.kind in ("attribute", "setter")
                and race.read.table in ctx.project.versioned_models
                or (write.kind == "attribute" and saved_at_its_version(model, write, race.read))
            ):
                continue  # the ORM writes the instance only at the version it read: a stale flush fails
            if unique_insert_first(model, race.test, write.node, ctx.project.unique_keys) or claim_won_before(
                model, db, write.node, write.instance
            ):
                continue  # a row kept unique inserted first, or the record's row claimed: a racing duplicate stops there
            if race.read.record and made_by_every_caller(
                model, race.read, write.node, ctx.project, ctx.retry.reruns_the_function(write.node)
            ):
                continue  # every caller hands over a row it just made: no other run has it
            if write.kind in ("attribute", "setter"):
                key = (write.instance, id(race.test))
                if key in seen:
                    continue  # one finding per decided instance, on its first (state) assignment
                seen.add(key)
                write = _preferred_assignment(ctx, write, race.test)
            read = race.read
            message = race_message(write, race)
            yield Report(
                write.node,
                message,
                suggestion=arithmetic_hint(ctx, write, built[0])
                if (built := built_columns(ctx.model, write))
                else condition_hint(ctx, write, *_decided_states(ctx, race)),
                lines=(("where", race.test if read.record and not race.computed else read.call),),
                confidence=lower_confidence(ctx, read),
                evidence=LOST_UPDATE
                if race.computed
                else _RECORD_EVIDENCE.get(read.record or "", "read in the function"),
            )
        yield from absence_reports(ctx)


# how IDM101 found the read that decides (its confidence is measured per kind)
LOST_UPDATE = "a sum on a column's unlocked value"  # measured apart from decisions
_STATES = ("literal", "constant")  # the value kinds a state written names
_RECORD_EVIDENCE = {
    "self": "read by a caller (the method's own row)",
    "parameter": "read by a caller (an instance passed in)",
    "loop variable": "read before the loop",
    "helper result": "read by a helper",
    "held": "read when first used (a record the object holds)",
}


def _preferred_assignment(ctx: FileContext, first: DbWrite, test: object) -> DbWrite:
    """Among the assignments to one instance decided by one test, report the state one."""
    found = races(ctx.model, ctx.db)
    candidates = [
        w
        for w in ctx.db.writes
        if w.kind in ("attribute", "setter")
        and w.instance == first.instance
        and (race := found.get(id(w))) is not None
        and race.test is test
    ]
    for write in candidates:
        if any(ctx.db.is_state_column(c) for c in write.sets):
            return write
    return first


def _decided_states(ctx: FileContext, race: Race) -> tuple[str, str]:
    """(the states the decision compared its column with, the column) for the help text:
    `if order.status == "pending"` gives ("'pending'", "status")."""
    column = race.columns[0] if len(race.columns) == 1 and race.columns[0] != "*" else "status"
    values = sorted(v for v in compared_values(ctx.model, race.test, column) if v)
    return (", ".join(values) if values else "<the state it was read in>"), column


class NonMonotonicTransition(Rule):
    code = "IDM103"
    stakes_follow_effects = True
    confidence = "medium"
    name = "non-monotonic-transition"
    summary = "A state column is set to a literal with no precondition on its current value."
    what_it_does = (
        "Flags a write that sets a state-like column (`status`, `state`, `stage`, `phase`, `step`, or configured "
        "`state-columns`) to a literal or an enum constant with no precondition on its current value in the same "
        "statement: `UPDATE orders SET status='paid' WHERE id=%s`, `Order.objects.filter(pk=pk).update(status='paid')`, "
        "`update(Order).where(Order.id == oid).values(status='paid')`, or `order.status = 'paid'; order.save()` on an "
        "instance loaded in the function without a locked, checked read (or saved with no state it expects: "
        "`instance.save(expected_task_state=[None])`, a conditional save, is a precondition for every column it saves), "
        "by a query that does not name the states it "
        "accepts (`get(pk=pk, state=FULFILLED)` is a precondition, as is a loop over SQLAlchemy rows a query chose by state: `filter_by(status=...)`, `filter(Order.status == ...)` or `select(Order).where(...)`, not an `or_()` or `!=`; a view's `get_queryset()` or `queryset` that `get_object()` draws from, a helper of the module returning such a query's row, a loop over one, or a query through a manager whose `get_queryset()` filters on the state: `objects = PendingManager()`; an update of the rows a locked query chose by state, `held = list(X.objects.select_for_update().filter(status=S))`, then `filter(id__in=[h.id for h in held]).update(...)`; unlocked, that is IDM101's race). Not reported where Python tests the current state "
        "against another state first (`if c.status != PENDING: raise`, also in a helper of the module given the record "
        "or giving it back: `check_identity(identity)`): a late message is refused there, and a duplicate that races "
        "between the test and the write is IDM101's (a read-decide-write), as is a write IDM101 reports. A model "
        "method's own literal (`def ship(self): self.status = 'shipped'`) is reported once, in the method (or in the "
        "helper that sets the state of the instance it is given); a method that writes the value its caller passes "
        "(`order.move_to('shipped')`, `set_status(order, 'shipped')`) is reported at the caller; one a module defines, "
        "called on the module (`crud.update_status(db, payment=payment, status='paid')`, also where the module is "
        "bound late: `crud = import_module('app.crud.payments')`), writes the record it is given, the one name the "
        "function uses as an object, or the one its key names (`transaction_id=transaction.id`, or `transaction_id="
        "transaction_id` after `transaction = get_transaction(transaction_id)`: the row the function tested). An update's value may "
        "be an attribute the function set to a constant first (`source.status = QUEUED; "
        "....update(status=source.status)`). Flags (`shipped = true`), version compares and insert-only tables are "
        "monotonic already. Where the project declares its state machine (a table `ALLOWED_TRANSITIONS = "
        "{Status.CREATED: [Status.PAID], ..., Status.FULFILLED: []}` of one enum's members, named for its moves, or "
        "django-fsm's `@transition(field=..., source=..., target=...)`; a name two enums or two classes share is not "
        "used), a state every state can reach (FULFILLED) is not backward and is not reported; any other is, naming the "
        "states it moves records back from, and the help names the machine's real predecessors. A deletion (`deleted`, "
        "`removed`) may follow any state. Where no machine is declared, a state of an enum or class (`MailState.SENT`) "
        "that the project's guards give up on (`if mail.state in (SENT, SENDING): return`) and no guarded move leaves "
        "(`if x.state == S: x.state = T`, `.filter(state=S).update(...)`) is final; where it is the machine's only one "
        "and every other state the project writes or tests is left by a guarded move, a write of it is not reported "
        "(`idemlint states` lists these). A model method (`def reject(self): self.state = REJECTED`) that the project "
        "calls only under a lock (after `select_for_update()`, in `with cache.lock(...)`) or on rows a state filter "
        "chose (`for r in qs.filter(state=PENDING): r.reject()`) has its precondition in the callers and is not reported "
        "(an unlocked test there is not enough), nor is a first state (`if created:`, `post_save`), nor an update keyed on "
        "the primary key of a row the function itself just made (`order = Order(...); session.add(order); "
        "session.flush()`, then `update(Order).where(Order.id == order.id)`; `Order.objects.create(...)`, then "
        "`filter(pk=order.pk).update(...)`), nor a write in a "
        "function every caller hands a row it just made (`upload = serializer.save(); process(upload)`, "
        "`task.delay(row.pk)` after `row = Row.objects.create(...)`, `Thread(target=run, args=(row.pk,))`, `task.delay("
        "token=row.token)` then `get(token=token)`, a name bound to `None` first (`log = None`, then `log = Delivery.objects.create()` in a `try`: no method runs on `None`), "
        "a mapping of arguments built first (`arguments = {'pk': row.pk}; task.apply_async((), arguments)`), an actor's `send(key)` after `key = str(row.uuid)`, and on through the "
        "row loaded by that key, or a query's update keyed on it (`filter(id=sid).update(...)`, the key turned back from text "
        "on the way: `sid = int(search_id)`); a method several classes define counts where every call of its name is on such a "
        "row): only that run writes the row. A Django admin action (`def mark_paid(modeladmin, request, queryset)`, "
        "a `ModelAdmin`'s `(self, request, queryset)`, `@admin.action`) sets the state its operator chose for the "
        "rows they picked: its writes, and a method only such actions call, are not reported; nor is a method defined in an RPC server's endpoint class (`target = oslo_messaging.Target(...)`; not a private helper, nor a function nested in a method), run for one message a cast sends at most once after the API claimed the move (cinder's `conditional_update`), nor a status set to an HTTP status on a record named for a response (`resp.status = HTTP_204`; a model's `status = '404'` is still a state). A setter handed the "
        "record (`def update_status(cls, order, new)`) that tests it and leaves before it writes (also in a leading "
        "`try:` whose handlers leave, or a `with`, after copying a re-read state onto it) checks the state first as "
        "a method testing `self` does (a test of a local read from it counts: `old = self.status; allowed = "
        "MOVES.get(old, ())`; `if new not in allowed: raise`; a test of the state asked for against the one held, `if new "
        "== self.status: return` (or `raise`), alone refuses no move back): its callers are not reported; a method named as a "
        "setter that no definition in the project lets write a state, shown by what it and the class's own methods "
        "it calls store (`set_status` that sets a `finished` flag and writes a file; not one that hands the value "
        "to an inherited method, another object's call, a JSON field or `setattr`; a stub says nothing), writes none; nor "
        "does one that only writes entries of a mapping kept under a state's name, or empties it (`manifest.state[step]"
        "[interval] = now`, `manifest.state = {}`: per-step times, not a state; not an entry that stores text, a constant or "
        "a value the setter is handed: `self.step_status[step] = status`), reading its row through a manager and logging "
        "through a call named `log_...` handed only keywords. A test that lets the "
        "write run only while the column is empty (`if not x.status:`) is a precondition, and a record's main "
        "state (`status`, `state`) moved under its precondition carries the other states the same statement, or "
        "the assignments one `save()` of the record persists with it, set (`update(status=ROLLED_BACK, rollback_status="
        "SUCCEEDED)` after a locked test of `status`); not the other way round, nor to a state saved on its own before "
        "the test or on another path. One save that sets a main state and companions with no precondition is one finding."
    )
    why = (
        "Messages arrive late, twice, and out of order. A transition with no precondition lets a late "
        "`payment_succeeded` move a refunded order back to paid, or a duplicate `shipped` event undo a `delivered`."
    )
    fix_hint = "Constrain the current state to the allowed predecessors in the write itself (`WHERE id=%s AND status IN ('created', 'pending')`) and read the row count."
    known_problems = (
        "Attribute assignments are checked only on instances loaded in the same function (an instance passed "
        "in as a parameter may be fresh). State values held in variables are not judged. Where no machine is "
        "declared, only final states are inferred (from the guards), not the order of the others; a final "
        "state written where the project has several (`SENT`, `FAILED`) is still reported, though the record "
        "may be one only this code writes. Callers are matched by the method's name: a method never called "
        "from Python whose name a library call makes under a lock (`client.publish(...)` in `with "
        "cache.lock(...)`) is taken as decided there. A row every caller has just made is taken as written by its run "
        "alone, though a broker may deliver its task twice. A state filter added on one path only "
        "(`if pending_only: q = q.filter(...)`) counts as if it were always there."
    )
    bad = """\
def ship(conn, order_id):
    cur = conn.cursor()
    cur.execute("UPDATE orders SET status = 'shipped' WHERE id = %s", (order_id,))
    conn.commit()
"""
    good = """\
def ship(conn, order_id):
    cur = conn.cursor()
    cur.execute("UPDATE orders SET status = 'shipped' WHERE id = %s AND status = 'packed'", (order_id,))
    if cur.rowcount == 0:
        conn.rollback()
        return  # duplicate or out of order: the order is not packed
    conn.commit()
"""
    how_to_fix = (
        ("DB-API", "`... WHERE id = %s AND status IN ('packed')` and check `cur.rowcount`."),
        ("Django", "`Order.objects.filter(pk=pk, status__in=['packed']).update(status='shipped')`."),
        (
            "SQLAlchemy",
            "`update(Order).where(Order.id == oid, Order.status.in_(['packed'])).values(status='shipped')`.",
        ),
    )
    triggers = (tuple(sorted(STATE_COLUMNS)), DB_WRITE, (*DATABASE, *RECORDS))
    skips_migrations = True
    needs_project = True
    project_facts = ("state_chain",)
    project_groups = frozenset({0, 1})

    @classmethod
    def trigger_groups(cls, config: Config) -> tuple[tuple[str, ...], ...]:
        extra = tuple(sorted(config.vocabulary.state_columns - STATE_COLUMNS))
        return ((*cls.triggers[0], *extra), *cls.triggers[1:])

    def check(self, ctx: FileContext) -> Iterator[Report]:
        model, db = ctx.model, ctx.db
        racy = races(model, db)
        # one finding per function, record and column: the branches of an `if/elif` setting it are one decision
        found: dict[tuple[object, str | None, str], list[tuple[DbWrite, str, str, str, DbRead | None, Declared]]] = {}

        judged: dict[tuple[int, str], tuple[bool, DbRead | None]] = {}

        def judge(write: DbWrite, column: str, kind: str, text: str) -> tuple[bool, DbRead | None]:
            if (id(write), column) not in judged:
                judged[(id(write), column)] = precondition(ctx, write, column, kind, text)
            return judged[(id(write), column)]

        carried = carried_companions(ctx, judge)
        for write in db.writes:
            if id(write) in racy or write.guarded or write.judged_in_method or decided_elsewhere(model, write.node):
                continue  # IDM101's; the setter checks the state; the method is reported; an operator chose the state
            for column, (kind, text) in write.sets.items():
                if not db.is_state_column(column) or kind not in _STATES or is_response_status(write.instance, text):
                    continue  # not a state column, not a state written, or a response's `status = HTTP_204`
                if column not in PRIMARY_STATES and id(write) in carried:
                    continue  # moved with a main state that has its precondition (`rollback_status` with `status`)
                has_one, read = judge(write, column, kind, text)
                if has_one:
                    continue
                declared = written_state(ctx.project.state_machines, column, kind, text, model.imports)
                if (
                    never_backward(declared, text)
                    or not declared
                    and ctx.project.is_sole_final(column, kind, text, model.imports)
                ):
                    continue  # the project's guards give up on it and no guarded move leaves it: nothing to overwrite
                key = (model.scope_of(write.node), write.instance or write.table, column)
                found.setdefault(key, []).append((write, column, kind, text, read, declared))
                break
        # a companion state saved with a main state reported here is that finding's, not one of its own
        reported = {persisted_together(model, w[0][0]): spot for spot, w in found.items() if spot[2] in PRIMARY_STATES}
        companions: dict[object, list[tuple[DbWrite, str, str, str, DbRead | None, Declared]]] = {}
        for spot in [k for k in found if k[2] not in PRIMARY_STATES]:
            main = reported.get(persisted_together(model, found[spot][0][0]))
            if main is not None:
                companions.setdefault(main, []).extend(found.pop(spot))
        for spot, writes in found.items():
            (write, column, kind, text, read, declared), others = writes[0], len(writes) - 1
            more = f" (and {others} more write{'s' * (others != 1)} of it in this function)" if others else ""
            yield Report(
                write.statement,
                f"{write.described()} sets {column} to {spelt_state(kind, text)} with no "
                f"precondition on its current value{more}{backward_from(declared)}",
                suggestion=condition_hint(ctx, write, predecessors(declared, kind, text), column),
                confidence=lower_confidence(ctx, read),
                evidence="the project's state machine" if declared else None,
                related=tuple(
                    Step(f"also sets {o[1]} to {spelt_state(o[2], o[3])}", node=o[0].statement)
                    for o in (*writes[1:], *companions.get(spot, ()))
                ),
            )
