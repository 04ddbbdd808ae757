"""How each call in a function is made, as `analysis/caller_guards.py` judges it: under a lock
(the row's, or a named one every caller takes), on a record a state filter chose, on a record
some project function returned, or plainly; and the class of the record it is made on, where
the record's binding shows it.

A block is walked in order, knowing what each name holds (`Records`): a record read under the
named lock, one a state filter chose (`for req in Req.objects.filter(state=S)`, `req =
Req.objects.get(pk=pk, state=S)`, `get_object_or_404(Req, state=S)`), one a function returned
(`req = barrier.get_pending()`: decided where that function returns only such rows), its
class (`Review.objects.get(...)`, `Review(...)`). A name bound again in any way (unpacked,
`except ... as`, a `match` capture, a walrus, in a branch or a loop's body) holds none of it
any more. A row read in a `try` whose every handler leaves (`except Hook.DoesNotExist: return`) is held
after it as if read inline: only the body's success goes on. Lookups go up a chain of blocks, so a long function costs no more than its length."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from idemlint.analysis.chosen_rows import called_name, chosen_by_state, query_chooses_state, record_class, rows_class
from idemlint.analysis.final_states import is_state_attribute
from idemlint.analysis.machines import dotted_name
from idemlint.knowledge.locks import ROW_LOCK_METHODS, names_a_shared_lock
from idemlint.knowledge.orms import NOT_ROWS, ROW_QUERY_METHODS

LOCKED_CALL, CHOSEN, PLAIN, LATER = "locked", "chosen", "plain", "later"  # how a call is made
VIA = "returned by "  # how a call on what a function returned is made: `returned by <function>`
LOCK, ROW_LOCK = "a lock", "a row lock"  # what a block holds: a shared lock, or the row's own


@dataclass(frozen=True)
class Held:
    """What one name holds: read under the named lock, chosen by a state filter, returned by a
    function (its name), of a class (its name)."""

    under_lock: bool = False
    chosen: bool = False
    returned_by: str = ""
    of_class: str = ""


_NOTHING = Held()


@dataclass
class Records:
    """What a block knows as it runs: the locks it holds and what each name holds; a block
    inside another asks its parent for what it does not know itself."""

    parent: Records | None = None
    locks: set[str] = field(default_factory=set)
    names: dict[str, Held] = field(default_factory=dict)
    bound_cache: dict[int, frozenset[str]] = field(default_factory=dict)  # shared by a function's blocks

    def inner(self, *locks: str) -> Records:
        return Records(self, {*self.locks, *locks}, bound_cache=self.bound_cache)

    def bound(self, node: ast.AST) -> frozenset[str]:
        return bound_names(node, self.bound_cache)

    def held(self, key: str) -> Held:
        block: Records | None = self
        while block is not None:
            if key in block.names:
                return block.names[key]
            block = block.parent
        return _NOTHING

    def copy(self) -> Records:
        """What the block knows now, kept apart from what it learns next."""
        return Records(self.parent, set(self.locks), dict(self.names), self.bound_cache)

    def forget(self, keys: set[str] | frozenset[str]) -> None:
        for key in keys:
            self.names[key] = _NOTHING


def calls_in(body: list[ast.stmt], records: Records) -> Iterator[tuple[ast.Call, str, str]]:
    """Each call in a block (not in nested functions), how it is made, and the class of the
    record it is made on ('' where unknown). `records` is the block's own: it is updated."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(statement, ast.If):  # a test is no lock: what it guards is decided only as before
            yield from _calls_of(statement.test, records)
            records.forget(records.bound(statement.test))  # `if (req := other):`
            yield from calls_in(statement.body, records.inner())
            yield from calls_in(statement.orelse, records.inner())
        elif isinstance(statement, ast.While):  # its test and body run again after the body binds a name
            again = records.inner()
            again.forget(records.bound(statement))
            yield from _calls_of(statement.test, again)
            yield from calls_in(statement.body, again.inner())
            yield from calls_in(statement.orelse, again.inner())
        elif isinstance(statement, (ast.For, ast.AsyncFor)):
            yield from _calls_of(statement.iter, records)
            inner = records.inner()
            inner.forget(records.bound(statement))
            target, owner = _key(statement.target), rows_class(statement.iter)
            inner.names[target] = Held(chosen=chosen_by_state(statement.iter), of_class=owner)
            yield from calls_in(statement.body, inner)
            after = records.inner()
            after.forget(records.bound(statement))  # `else:` runs after the body's last round
            yield from calls_in(statement.orelse, after)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                yield from _calls_of(item.context_expr, records)
            locks = any(_takes_shared_lock(item.context_expr) for item in statement.items)
            inner = records.inner(LOCK) if locks else records.inner()
            inner.forget({name for item in statement.items for name in records.bound(item)})  # `as req`
            yield from calls_in(statement.body, inner)
        elif isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
            tried = {name for s in statement.body for name in records.bound(s)}  # type: ignore[attr-defined]
            before = records.copy()  # what the handlers and `finally` start from
            if statement.handlers and all(_leaves(h.body) for h in statement.handlers):  # type: ignore[attr-defined]
                # every failure leaves: past the `try` its body and `else` ran, as if inline
                yield from calls_in(statement.body + statement.orelse, records)  # type: ignore[attr-defined]
                for handler in statement.handlers:  # type: ignore[attr-defined]
                    inner = before.inner()
                    inner.forget(tried | ({handler.name} if handler.name else set()))
                    yield from calls_in(handler.body, inner)
                inner = before.inner()
                inner.forget(tried)
                yield from calls_in(statement.finalbody, inner)  # type: ignore[attr-defined]
                records.forget({name for s in statement.finalbody for name in records.bound(s)})  # type: ignore[attr-defined]
                continue
            yield from calls_in(statement.body, records.inner())  # type: ignore[attr-defined]
            for handler in statement.handlers:  # type: ignore[attr-defined]
                inner = records.inner()
                inner.forget(tried | ({handler.name} if handler.name else set()))  # `except Exception as req`
                yield from calls_in(handler.body, inner)
            for block in (statement.orelse, statement.finalbody):  # type: ignore[attr-defined]
                inner = records.inner()
                inner.forget(tried)  # the body may have bound them anew
                yield from calls_in(block, inner)
        elif isinstance(statement, ast.Match):
            yield from _calls_of(statement.subject, records)
            records.forget(records.bound(statement.subject))
            for case in statement.cases:
                inner = records.inner()
                inner.forget(records.bound(case.pattern))  # `case {"req": req}:`
                if case.guard is not None:
                    yield from _calls_of(case.guard, inner)
                    inner.forget(records.bound(case.guard))
                yield from calls_in(case.body, inner)
        else:
            yield from _calls_of(statement, records)
            bound = records.bound(statement)
            records.forget(bound)
            if isinstance(statement, ast.Assign) and len(bound) == 1 and len(statement.targets) == 1:
                records.names[next(iter(bound))] = _binding(statement.value, LOCK in records.locks)
            if _locks_rows(statement):
                records.locks.add(ROW_LOCK)  # `select_for_update().get(...)`: the rest of the block holds the row
            continue
        records.forget(records.bound(statement))  # a name bound in a branch may hold anything after it


def _leaves(body: list[ast.stmt]) -> bool:
    """The block ends by leaving (`return`, `raise`, `continue`, `break`), on every branch of a
    last `if`."""
    last = body[-1] if body else None
    if isinstance(last, ast.If):
        return _leaves(last.body) and _leaves(last.orelse)
    return isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break))


def bound_names(node: ast.AST, cache: dict[int, frozenset[str]] | None = None) -> frozenset[str]:
    """Every record a node binds, as written (`req`, `self.paper`): assigned, unpacked,
    annotated, by a walrus, a loop, `with ... as`, `except ... as`, a `match` capture, an import;
    `req.state = X` binds `req` anew too (it is no longer in the state a filter chose). With a
    `cache`, each node is read once however deep the statements nest (an `elif` chain)."""
    cache = {} if cache is None else cache
    pending: list[tuple[ast.AST, bool]] = [(node, False)]
    while pending:
        current, children_done = pending.pop()
        if id(current) in cache:
            continue
        children = list(ast.iter_child_nodes(current))
        if not children_done:
            pending.append((current, True))
            pending.extend((child, False) for child in children if id(child) not in cache)
            continue
        found = _binds(current)
        for child in children:
            found |= cache.get(id(child), _NONE)
        cache[id(current)] = frozenset(found) if found else _NONE
    return cache[id(node)]


_NONE: frozenset[str] = frozenset()


def _binds(node: ast.AST) -> set[str]:
    """What one node itself binds."""
    if isinstance(node, (ast.Name, ast.Attribute, ast.Subscript)) and isinstance(node.ctx, ast.Store):
        found = {_key(node)}
        if isinstance(node, ast.Attribute) and is_state_attribute(node.attr):
            found.add(_key(node.value))  # `req.state = ACTIVE`: no longer in the state a filter chose
        return found
    if isinstance(node, ast.ExceptHandler) and node.name:
        return {node.name}
    if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
        return {node.name}
    if isinstance(node, ast.MatchMapping) and node.rest:
        return {node.rest}
    if isinstance(node, ast.alias):
        return {node.asname or node.name.split(".", 1)[0]}
    return set()


def _binding(value: ast.expr, locked: bool) -> Held:
    """What a name bound to `value` holds."""
    if not isinstance(value, ast.Call):
        return Held(under_lock=locked)
    how = chosen_or_returned(value)
    return Held(
        under_lock=locked,
        chosen=how == CHOSEN,
        returned_by=how[len(VIA) :] if how.startswith(VIA) else "",
        of_class=record_class(value),
    )


def _calls_of(node: ast.AST, records: Records) -> Iterator[tuple[ast.Call, str, str]]:
    """The calls in a statement or expression; one in a lambda (`on_commit(lambda: r.reject())`)
    runs later, when the lock is gone, and is never decided."""
    later = {id(n) for lam in ast.walk(node) if isinstance(lam, ast.Lambda) for n in ast.walk(lam.body)}
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            yield call, LATER if id(call) in later else _how(call, records), _receiver_class(call, records)


def _how(call: ast.Call, records: Records) -> str:
    """How a call is made, judged by the record it acts on."""
    if _is_super(call.func):
        return LATER  # the parent's method: the override's own callers decide nothing here
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    if ROW_LOCK in records.locks or LOCK in records.locks and _read_under_lock(receiver, records):
        return LOCKED_CALL
    if isinstance(receiver, ast.Call) and not called_name(receiver)[:1].isupper():
        return chosen_or_returned(receiver)  # `Req.objects.pending(b).accept()` (one read under a lock returned above)
    # `TableHandler().add_columns(table)`: a helper object made for the call acts on what it is handed
    arguments = [*call.args, *(k.value for k in call.keywords)]
    own = records.held(_key(receiver)) if receiver is not None else _NOTHING
    # a record's own method acts on the record (`waiver.approve(change)`: on the waiver); a
    # module's or a helper object's acts on what it is handed (`helpers.close(req)`)
    acted_on: list[ast.expr] = [receiver] if receiver is not None else []
    if own == _NOTHING:
        acted_on += arguments
    held = [records.held(_key(record)) for record in acted_on]
    if LOCK in records.locks or any(h.chosen for h in held):
        return CHOSEN  # a filter's rows, or a record read before the named lock: no lock on its read
    return next((VIA + h.returned_by for h in held if h.returned_by), PLAIN)


def _receiver_class(call: ast.Call, records: Records) -> str:
    """The class of the record a method is called on, where its binding says it (`review =
    get_object_or_404(Review, ...)`, `for r in Review.objects.filter(...)`) or the call that
    gives it does (`Review.objects.get(pk=pk).decline()`)."""
    if not isinstance(call.func, ast.Attribute):
        return ""
    receiver = call.func.value
    return record_class(receiver) if isinstance(receiver, ast.Call) else records.held(_key(receiver)).of_class


def chosen_or_returned(query: ast.Call) -> str:
    """How a call on the record another call gives is made: on rows a state filter chose, on
    what some function returned, or plainly."""
    name = called_name(query)
    if name in NOT_ROWS:
        return PLAIN
    if query_chooses_state(query):
        return CHOSEN
    return VIA + name if name and name not in ROW_QUERY_METHODS else PLAIN


def _read_under_lock(receiver: ast.expr | None, records: Records) -> bool:
    """The record a call acts on was read under the named lock: bound in its block (`order =
    Order.objects.get(pk=pk)`, then `order.cancel()`) or read in the call itself
    (`Order.objects.get(pk=pk).cancel()`)."""
    if receiver is None:
        return False
    return isinstance(receiver, ast.Call) or records.held(_key(receiver)).under_lock


def _is_super(func: ast.expr) -> bool:
    """`super().accept`, `super(Cls, self).accept`."""
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )


def _locks_rows(statement: ast.stmt) -> bool:
    """`select_for_update()` in the statement, not in one branch of a conditional expression
    (`... if lock else Model.objects`): that one may not run."""
    branches = {id(n) for e in ast.walk(statement) if isinstance(e, ast.IfExp) for n in ast.walk(e)}
    return any(
        isinstance(node, ast.Attribute) and node.attr in ROW_LOCK_METHODS and id(node) not in branches
        for node in ast.walk(statement)
    )


def _takes_shared_lock(expr: ast.expr) -> bool:
    """`with cache.lock(key):`, `with advisory_lock(name):`: a call that takes a lock other
    processes honour (a bare name may hold a `threading.Lock()`: not one)."""
    if not isinstance(expr, ast.Call):
        return False
    name = dotted_name(expr.func) or (expr.func.attr if isinstance(expr.func, ast.Attribute) else "")
    return bool(name) and names_a_shared_lock(name)


def _key(expr: ast.AST) -> str:
    """A record as written (`req`, `self.paper`), the same read or assigned."""
    return ast.unparse(expr)
