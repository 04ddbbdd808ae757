"""Locks that hold a decision: which reads are made under a lock every run takes.

A read-decide-write is no race where a duplicate delivery has to wait for the first run and
then reads what it wrote: the read locks its row (`select_for_update()`), the function locked a
row before it (`is_locked`, `row_locked_first`), a lock other processes honour is held over the
read and the write (`shared_lock_over`, `locked_together`), or a non-blocking lock was won first
(`lock_won_before`), or the record's own row was claimed by a conditional update whose zero count
leaves (`claim_won_before`). IDM101 and IDM103 read these; IDM103 asks that the state itself be checked
under the lock (`state_checked_under_a_lock`): a lock stops a concurrent run, not a late one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import admitted_values, chain_calls
from idemlint.analysis.db.decisions import decided_columns, guarding_tests
from idemlint.analysis.db.records import OWN_KEYS, DbRead, DbWrite
from idemlint.analysis.db.scopes import source_order
from idemlint.analysis.flow import line_of, runs_before
from idemlint.analysis.model import ModuleModel, called_name, local_callee, string_value
from idemlint.knowledge.locks import (
    ENDS_THE_TRANSACTION,
    LETS_OTHERS_ON,
    LOCKS_A_ROW,
    PROCESS_LOCKS,
    names_a_shared_lock,
    says_whether_held,
)
from idemlint.knowledge.orms import VERSION_CHECKED_SAVES

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db.classify import DbAnalysis
else:
    cst = LazyModule("libcst", globals(), "cst")


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


def row_locked_first(model: ModuleModel, db: DbAnalysis, read: DbRead, acts: cst.CSTNode) -> bool:
    """A row lock the function took before `read` on every way to it, in the same block or one
    around it (`Docket.objects.select_for_update().get(pk=d.pk)`, then the entry is looked up),
    still held where the function `acts` on what it read (the write, the insert): it holds to
    the end of the transaction, and a duplicate delivery, locking the same row first, waits
    there, then reads what the first run wrote. Not a lock that lets the duplicate on
    (`skip_locked`, `FOR SHARE`, `with_for_update(read=True)`), one that may lock nothing (a
    `.first()` that finds no row, a branch of an expression, a comprehension, a query that never
    runs), one on the table the read looks in (an absent row locks nothing), nor one a commit,
    rollback or close ends first (also later in a loop the read is in). A record a caller
    loaded (`self`, a parameter) was read before that lock, and may be stale."""
    if read.record:
        return False
    scope = model.scope_of(read.call)
    return any(
        r.locked
        and r.table != read.table
        and model.scope_of(r.call) is scope
        and runs_before(model, r.call, read.call)
        and runs_before(model, r.call, acts)
        and _holds_until(model, r, (read.call, acts))
        for r in db.reads
    )


def _holds_until(model: ModuleModel, lock: DbRead, uses: tuple[cst.CSTNode, ...]) -> bool:
    statement = line_of(model, lock.call)
    if not isinstance(lock.call, cst.Call) or LETS_OTHERS_ON.search(model.module.code_for_node(statement)):
        return False
    for ancestor in model.ancestors(lock.call):
        if ancestor is statement:
            break
        if isinstance(
            ancestor, (cst.IfExp, cst.BooleanOperation, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
        ):
            return False  # `... if strict else None`, `strict and ...`, `[... for p in pks]`: it may not run
    if called_name(lock.call) not in LOCKS_A_ROW:
        return False
    return not ended_between(model, lock.call, uses)


def ended_between(model: ModuleModel, taken: cst.CSTNode, uses: tuple[cst.CSTNode, ...]) -> bool:
    """A commit, rollback or close runs after `taken` and before the last of `uses`, or in a loop
    the uses run in and `taken` does not (it may end the transaction before the next round)."""
    order = source_order(model, model.scope_of(taken))
    start, end = order.get(taken, 0), max(order.get(use, 0) for use in uses)
    loops = [
        a
        for use in uses
        for a in model.ancestors(use)
        if isinstance(a, (cst.For, cst.While)) and not model.is_inside(taken, a)
    ]
    return any(
        isinstance(n, cst.Call)
        and called_name(n) in ENDS_THE_TRANSACTION
        and (start < order.get(n, -1) < end or any(model.is_inside(n, loop) for loop in loops))
        for n in order
    )


def shared_lock_over(model: ModuleModel, node: cst.CSTNode) -> cst.With | None:
    """The innermost `with` of the function whose body holds `node` under a lock other processes
    honour (`with advisory_lock(key):`, `with cache.lock(key):`, or a name bound to one)."""
    for ancestor in model.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return None
        if isinstance(ancestor, cst.With) and model.is_inside(node, ancestor.body):
            for item in ancestor.items:
                calls = _lock_calls(model, item.item)
                waits = not any(_may_not_wait(call) or says_whether_held(model.call_name(call) or "") for call in calls)
                if any(_takes_a_shared_lock(model, call) for call in calls) and (
                    waits or _leaves_unless_held(model, item, node)
                ):
                    return ancestor
    return None


def _takes_a_shared_lock(model: ModuleModel, call: cst.Call) -> bool:
    """A lock other processes honour, by its name, unless this module defines it on a lock of
    one process or one machine (`def locked_cache(): with _rlock: yield`, `fcntl.flock`)."""
    if not names_a_shared_lock(model.call_name(call) or ""):
        return False
    helper = local_callee(model, call)
    if helper is None:
        return True
    held: list[cst.CSTNode] = [helper]  # and what the module bound the names it reads to (`_lock = RLock()`)
    for name in {n.value for n in model.iter_nodes(helper.body) if isinstance(n, cst.Name)}:
        held += [b.value for b in model.bindings_of(model.module, name) if b.value is not None]
    return not any(
        isinstance(n, cst.Call) and (model.call_name(n) or "").startswith(PROCESS_LOCKS)
        for node in held
        for n in (node, *model.iter_nodes(node))
    )


def _bare_name(expr: cst.BaseExpression) -> str:
    """`False` for the name `False`; "" for anything that is not a bare name."""
    return expr.value if isinstance(expr, cst.Name) else ""


def _may_not_wait(call: cst.Call) -> bool:
    """`advisory_lock(key, wait=False)`, `lock(key, blocking=False)`, `nowait=True`: the body
    runs whether or not the lock was won."""
    flags = {arg.keyword.value: _bare_name(arg.value) for arg in call.args if arg.keyword is not None}
    return any(flags.get(k) == "False" for k in ("wait", "blocking", "block")) or any(
        flags.get(k) == "True" for k in ("nowait", "no_wait")
    )


def _leaves_unless_held(model: ModuleModel, item: cst.WithItem, node: cst.CSTNode) -> bool:
    """`with advisory_lock(key, wait=False) as acquired: if not acquired: return`, before `node`."""
    held = item.asname.name if item.asname is not None else None
    return isinstance(held, cst.Name) and any(
        isinstance(x, cst.Name) and x.value == held.value for x in _refused_unless(model, node)
    )


def _lock_calls(model: ModuleModel, item: cst.BaseExpression) -> list[cst.Call]:
    """What a `with` item calls to take its lock: the item's own call (`advisory_lock(key)`), or
    the calls a bare name was bound to in the function (`guard = RedisLock(...)`; `with guard:`);
    not calls in its arguments (`open(path.lock())`)."""
    if isinstance(item, cst.Call):
        return [item]
    if isinstance(item, cst.Name):
        bound = model.bindings_of(model.scope_of(item), item.value)
        return [b.value for b in bound if isinstance(b.value, cst.Call)]
    return []


def locked_together(model: ModuleModel, read: DbRead, write: DbWrite) -> bool:
    """The read and the write run under one lock every run takes: the read's own row lock, or a
    shared lock held over both (a duplicate waits for the first run, then reads what it wrote)."""
    if read.locked:
        return True
    held = shared_lock_over(model, read.call)
    return held is not None and model.is_inside(write.node, held.body) or lock_won_before(model, read.call)


def state_checked_under_a_lock(
    model: ModuleModel, db: DbAnalysis, deciding: list[tuple[DbRead, cst.BaseExpression]], write: DbWrite, column: str
) -> bool:
    """The state, read and written under one lock every run takes, tested there (IDM103): as
    `order.status`, a name bound to it, or through the record's own predicate (`order.is_paid`,
    `order.can_pay()`, `can_pay(order)`). A test of another column there (`if rdi.business_area
    is None: raise`) is no precondition: a lock stops a concurrent run, not a late one."""
    return any(
        (locked_together(model, read, write) or row_locked_first(model, db, read, write.node))
        and _tests_the_state(model, test, read, column)
        for read, test in deciding
    )


def _tests_the_state(model: ModuleModel, test: cst.BaseExpression, read: DbRead, column: str) -> bool:
    if column in decided_columns(model, test, read):
        return True
    record = read.instance
    code = model.module.code_for_node
    for node in (test, *model.iter_nodes(test)):
        if isinstance(node, cst.Name) and any(
            isinstance(b.value, cst.Attribute) and b.value.attr.value == column
            for b in model.bindings_of(model.scope_of(test), node.value)
        ):
            return True  # `status = order.status` ... `if status != "pending":`
        if not record:
            continue
        if isinstance(node, cst.Call):
            receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
            if receiver is not None and code(receiver) == record or any(code(a.value) == record for a in node.args):
                return True  # `order.can_pay()`, `can_pay(order)`
        if isinstance(node, cst.Attribute) and _PREDICATE.match(node.attr.value) and code(node.value) == record:
            return True  # `order.is_paid`
    return False


_PREDICATE = re.compile(r"^(is|can|has|may|was|should)_")


def lock_won_before(model: ModuleModel, node: cst.CSTNode) -> bool:
    """A non-blocking lock taken before `node` in a block that holds it, leaving when another run
    has it: `if not acquire_lock(key): return` (`continue`, `raise Busy`). Only one run at a
    time gets past it."""
    return any(isinstance(x, cst.Call) and _takes_a_lock(model, x) for x in _refused_unless(model, node))


def claim_won_before(model: ModuleModel, db: DbAnalysis, node: cst.CSTNode, instance: str | None) -> bool:
    """A claim of the record's own row, won before `node`: a conditional update naming the row by
    its key (`claimed = X.objects.filter(pk=r.pk, status="queued").update(status="running")`)
    whose zero count leaves (`if not claimed: return`, or the update tested where it is made).
    One run at a time gets past it: what the function then tests and writes on `r` is the owner's."""
    if not instance:
        return False
    refused = list(_refused_unless(model, node))
    for write in db.writes:
        if write.kind == "attribute" or write.call is None or not _moves_its_condition(model, db, write):
            continue
        if not _names_the_row(model, write.call, instance):
            continue
        for test in refused:
            if test is write.call or isinstance(test, cst.Name) and model.sole_value(test) is write.call:
                return True  # the count tested where it is made, or through a name bound to it alone
    return False


def _moves_its_condition(model: ModuleModel, db: DbAnalysis, write: DbWrite) -> bool:
    """The update sets a column its filter matches by a value to one the filter does not admit
    (`status="queued"` to "running"): a second run matches nothing. Not a touch of another
    column, nor a range (`attempts__lt=5`), nor a value the filter takes too (`status__in=
    [QUEUED, RUNNING]` to RUNNING, `status="queued"` to "queued")."""
    admitted = admitted_values(model, write.call) if write.call is not None else {}
    return any(
        db.is_condition(p)
        and p.op in ("eq", "in", "is")
        and p.column in write.sets
        and write.sets[p.column][1].strip("'\"") not in {text.strip("'\"") for text in admitted.get(p.column, ())}
        for p in write.where
    )


def _names_the_row(model: ModuleModel, call: cst.Call, instance: str) -> bool:
    """A query whose `filter()` or `get()` names the record's own row: `pk=r.pk`, `id=r.id`."""
    code = model.module.code_for_node
    keys = {f"{instance}.{key}" for key in OWN_KEYS}
    return any(
        a.keyword is not None and a.keyword.value in OWN_KEYS and code(a.value) in keys
        for link in chain_calls(call)
        if isinstance(link.func, cst.Attribute) and link.func.attr.value in ("filter", "get")
        for a in link.args
    )


def _refused_unless(model: ModuleModel, node: cst.CSTNode) -> Iterator[cst.BaseExpression]:
    """`x` of each `if not x: return` (`continue`, `raise`) that `node` runs past."""
    for refuses, test in guarding_tests(model, node):
        if refuses and isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            yield test.expression


def _takes_a_lock(model: ModuleModel, call: cst.Call) -> bool:
    """A project function named for taking a lock and saying whether it got it:
    `acquire_account_lock(key)`, `try_lock(key)`, `take_mutex(name)`; not `get_block()`, not
    `lock.acquire(blocking=False)` (the receiver may be a `threading.Lock()`)."""
    last = (model.call_name(call) or model.dotted(call.func) or "").rsplit(".", 1)[-1].lower()
    return bool(
        re.match(
            r"^_*(?:acquire|try|take|grab)(?:_\w+)?_(?:lock|mutex)$|^_*(?:acquire|try|take|grab)(?:lock|mutex)$", last
        )
    )


def _locks_in_sql(model: ModuleModel, scope: cst.CSTNode) -> bool:
    """A table, row or advisory lock taken in SQL text somewhere in the function."""
    return any(
        model.scope_of(s) is scope and _LOCK_SQL.search(string_value(s) or "")
        for s in model.strings
        if isinstance(s, cst.SimpleString | cst.ConcatenatedString)
    )


_LOCK_SQL = re.compile(r"\bLOCK\s+TABLE|\bFOR\s+(NO\s+KEY\s+)?UPDATE\b|pg_advisory(_xact)?_lock", re.IGNORECASE)


def saved_at_its_version(model: ModuleModel, write: DbWrite, read: DbRead) -> bool:
    """The record is a document of an ORM whose `save()` writes it only at the version it was
    read (`knowledge/orms.VERSION_CHECKED_SAVES`: frappe's `Document.save()` compares `modified`
    under a row lock), and the function saves it so after the write: `self.status = ...;
    self.save()` in a `Document`, or on `doc = frappe.get_doc(...)`. A racing run's save then
    fails instead of overwriting; `db_set()` and `frappe.db.set_value()` skip the check."""
    if write.kind != "attribute" or write.instance is None:
        return False
    imported = {target.split(".")[0] for target in model.imports.values()}
    for library, (base, loaders) in VERSION_CHECKED_SAVES.items():
        if library not in imported:
            continue
        if not _saved_on_every_way_on(model, write):
            continue
        if read.record == "self":
            owner = model.enclosing_class(write.node)
            if owner is not None and any((model.dotted(b.value) or "").rsplit(".", 1)[-1] == base for b in owner.bases):
                return True
        elif read.record == "helper result" and isinstance(read.call, cst.Call):
            if (model.qualname(read.call.func) or "") in loaders:
                return True
    return False


def _saved_on_every_way_on(model: ModuleModel, write: DbWrite) -> bool:
    """`instance.save()` itself (not a helper given it, not `db_update()`) after the write, in
    the write's block or one around it: every way on from the write reaches it."""
    written = line_of(model, write.statement)
    for node in model.iter_nodes(model.scope_of(written)):
        if not (
            type(node) is cst.Call
            and type(node.func) is cst.Attribute
            and node.func.attr.value == "save"
            and model.dotted(node.func.value) == write.instance
        ):
            continue
        saved = line_of(model, node)
        body = getattr(model.parents.get(saved), "body", None)
        if not isinstance(body, (list, tuple)):
            continue
        for current in (written, *model.ancestors(written)):
            if current in body:
                if body.index(current) < body.index(saved):
                    return True
                break
    return False
