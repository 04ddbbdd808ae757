"""Preconditions a function's callers hold: a writer the project calls only under a lock or
for records a state filter chose.

A model method or helper often writes a state with no test of its own (`def reject(self):
self.state = REJECTED`) because each caller holds the row first (`select_for_update().get(...)`,
`with cache.lock(...)`), or hands it only records a state filter chose (`for req in
Request.objects.filter(state=PENDING): req.withdraw()`, `req = Request.objects.get(pk=pk,
state=PENDING)`, or `req = barrier.get_pending_request()` where that function returns only such
rows: `analysis/chosen_rows.py`). A name bound again after the query, in any branch, holds
none of this. The precondition is the callers', as it would be were the write inline there, and IDM103 does not report the write inside such a
function. A caller's unlocked test (`if req.state == PENDING: req.accept()`) is not enough:
another writer may come between the test and the write (IDM101 reports the call where it knows
the callee writes the state), so the write stays reported.

A function counts as decided by its callers when its name is defined once in the project, or,
as a method, its class's name for it is (`Review.decline` where `Preprint` defines a `decline`
too), at least one call that may run it is so made, and the name appears nowhere else: not in
another call, not handed on as a value (`map(self.reject, ...)`, `callback=reject`), not queued
as a task (`reject.delay(...)`), not in a string (`getattr(req, "reject")`), not in a lambda run
later (`on_commit(lambda: req.reject())`), not run as the parent's (`super().reject()`: the
framework may call the override with no lock). A call on a record whose class its binding
shows (`review = get_object_or_404(Review, ...)`, `Review.objects.get(...)`, a loop over
`Review.objects.filter(...)`, `self` in a method of `Review`) may run only that class's method,
or one it inherits; a call on a record of unknown class may run any of them. A call inside the
function itself (recursion) runs in a run already decided. Under a named lock (`with
cache.lock(key):`), a call on a record read inside the lock holds it as the row's lock would,
for IDM101 too; on a record read before the lock, only as the callers' precondition (the test
inside may be stale). In a file whose bytes show no state test, no lock, no call of a method it
defines and no call on a record another call just gave, every identifier counts as such a use
(a regular expression reads them: `analysis/names_used.py`); the rest are parsed with stdlib
`ast` (the parse the final-state evidence already made, where there is one). Names and class
names are all that is matched: a library's method of the same name called under a lock counts
as a call of it.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator

from idemlint.analysis.chosen_rows import (
    called_name,
    chosen_by_state,
    chosen_row_returners,
    query_chooses_state,
    record_class,
    returns_chosen_rows,
    rows_class,
)
from idemlint.analysis.machines import dotted_name
from idemlint.analysis.names_used import names_used, names_used_otherwise
from idemlint.knowledge.locks import ROW_LOCK_METHODS, names_a_lock_decorator, names_a_shared_lock
from idemlint.knowledge.orms import NOT_ROWS, ROW_QUERY_METHODS

# per file: (names of calls made only under a lock or on a record a state filter chose; those
# of them some call of which holds no lock (only the filter's choice); every other name the file
# calls at its top level, references, queues or spells in a string; the names it defines with
# `def`, with repeats; for each name called plainly inside functions, those functions' names:
# such a call is decided where every function making it is; the functions it defines that
# return only rows a state filter chose, each with the functions whose rows it returns in turn
# (`return self.get_draft(app)`); each call on a record some function returned, as (the name
# called, the function that returned the record, the function making the call): decided if
# that function returns only rows a state filter chose, plain otherwise)
CallFacts = tuple[
    frozenset[str],
    frozenset[str],
    frozenset[str],
    tuple[str, ...],
    tuple[tuple[str, tuple[str, ...]], ...],
    tuple[tuple[str, tuple[str, ...]], ...],
    tuple[tuple[str, str, str], ...],
]
NO_CALLS: CallFacts = (frozenset(), frozenset(), frozenset(), (), (), (), ())

# what may make a call decided: a row lock, a `with` of a lock, a loop over a state filter; a
# file that shows none is read by the regular expression alone, parsed or not
_WITH_LOCK = re.compile(
    rb"^[ \t]*(?:(?:async[ \t]+)?with[ \t][^\n:]*(?:[lL]ock|[mM]utex|locked_\w+|Locked[A-Z]\w*)\(|@[\w.]*(?:[lL]ock|[mM]utex))",
    re.MULTILINE,
)
_FOR_STATE = re.compile(
    rb"^[ \t]*(?:async[ \t]+)?for[ \t][^\n]*?(?:\w*(?:state|status)(?:__in|__exact)?[ \t]*=[^=]|\.\w*(?:state|status)[ \t]*(?:==|in\b))",
    re.MULTILINE,
)


# a record bound to a call's result and handed a method soon after (`req = Req.objects.pending(b)`,
# then `req.accept(`): the function that returned it may return only rows a state filter chose
_CALL_ON_RETURNED = re.compile(
    rb"^[ \t]+(\w+)[ \t]*=[ \t]*[\w.]+\([^\n]*\n(?:[^\n]*\n){0,12}?[ \t]+\1\.\w+\(", re.MULTILINE
)


def _may_decide(source: bytes) -> bool:
    return (
        b"_for_update(" in source
        or b"with_lockmode(" in source
        or (b"ock" in source or b"utex" in source)
        and _WITH_LOCK.search(source) is not None
        or (b"state" in source or b"status" in source)
        and _FOR_STATE.search(source) is not None
        or _CALL_ON_RETURNED.search(source) is not None
    )


_DEFINED = re.compile(rb"\bdef[ \t]+(\w+)")
_CALLED = re.compile(rb"\.(\w+)\(")  # a method call: `signup.anonymize(`
# in `tested`: a shared lock is held (every record is decided under it, and a duplicate run of
# the caller waits for it), or the row's own lock, which every other writer of the row waits for too
_LOCKED, _ROW_LOCKED, _READ_UNDER_LOCK = "<a lock>", "<a row lock>", "<read under the lock> "
_LOCKED_CALL, _CHOSEN, _PLAIN, _LATER = "locked", "chosen", "plain", "later"  # how a call is made
_VIA = "returned by "  # in `tested`, `returned by <function> <record>`; as how a call is made, `returned by <function>`
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_OF = "of class "  # in `tested`, `of class <Class> <record>`: the record's class, where its binding says it


def call_facts(source: bytes, tree: ast.Module | None) -> CallFacts:
    """One file's calls: which are decided (under a lock, on rows a state filter chose), and
    every other name it uses. `tree`: the file's parse where it shows a state test (or None).
    A file that shows a lock or a loop over a state filter, or calls a method it defines (which
    a decided function may call), is parsed here if it was not; the rest are read by a regular
    expression alone: their names are all they give."""
    found = _DEFINED.findall(source)
    defined = tuple(name.decode() for name in found)
    if tree is None and (_may_decide(source) or not set(found).isdisjoint(_CALLED.findall(source))):
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            tree = None
    if tree is None:
        return frozenset(), frozenset(), names_used(source, defined), defined, (), (), ()
    guarded: set[str] = set()
    chosen: set[str] = set()
    other: set[str] = set()
    inside: dict[str, set[str]] = {}
    via: set[tuple[str, str, str]] = set()
    returning: list[tuple[str, tuple[str, ...]]] = []
    funcs: set[int] = set()
    owners = {
        id(f): c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body if isinstance(f, _DEFS)
    }
    defined += tuple(f"{owners[id(f)]}.{f.name}" for f in ast.walk(tree) if isinstance(f, _DEFS) and id(f) in owners)
    for node in ast.walk(tree):
        if isinstance(node, _DEFS):
            held = (_LOCKED,) if any(_names_a_lock(d) for d in node.decorator_list) else ()
            owner = owners.get(id(node), "")
            me = f"{owner}.{node.name}" if owner else node.name
            for call, how, of in _calls_in(node.body, (*held, f"{_OF}{owner} self") if owner else held):
                name = called_name(call)
                funcs.add(id(call.func))
                if not name:
                    continue
                key = f"{of}.{name}" if of else name  # `Review.decline` where the record's class is known
                if how in (_LOCKED_CALL, _CHOSEN):
                    guarded.add(key)
                    if how == _CHOSEN:
                        chosen.add(key)
                elif how == _PLAIN:
                    inside.setdefault(key, set()).add(me)
                elif how.startswith(_VIA):
                    via.add((key, how[len(_VIA) :], me))
                else:
                    other.add(name)  # in a lambda: it runs later, in no function's lock
            returned = returns_chosen_rows(node)
            if returned is not None:
                returning.append((node.name, returned))
    other |= names_used_otherwise(tree, funcs)
    return (
        frozenset(k for k in guarded if _base(k) not in other),
        frozenset(k for k in chosen if _base(k) not in other),
        frozenset(other - {""}),
        defined,
        tuple(sorted((k, tuple(sorted(callers))) for k, callers in inside.items() if _base(k) not in other)),
        tuple(sorted(returning)),
        tuple(sorted(v for v in via if _base(v[0]) not in other)),
    )


def _base(key: str) -> str:
    """The function name a key is for: `decline` of `Review.decline`."""
    return key.rsplit(".", 1)[-1]


def join_call_facts(files: Iterable[CallFacts], locked: bool = False) -> frozenset[str]:
    """The names of the functions the project calls only under a lock, on rows a state filter
    chose, or from functions that are themselves so called (`_change_state` locks the ticket and
    calls `self._finish_or_next()`, which calls `self.set_active()`). With `locked`, only under
    a lock (the row's, or a named one each caller takes, as `with lock:` around a test and its
    write inline): rows a filter chose were read without one, so a test on the record may be stale."""
    guarded: set[str] = set()
    unlocked: set[str] = set()  # with `locked`, the calls made on rows a filter chose
    used: set[str] = set()
    definitions: dict[str, int] = {}
    callers: dict[str, set[str]] = {}
    returning: dict[str, tuple[str, ...]] = {}
    via: set[tuple[str, str, str]] = set()
    for calls_guarded, calls_chosen, calls_other, defined, inside, returns, calls_via in files:
        guarded.update(calls_guarded)
        used.update(calls_other)
        if locked:
            unlocked.update(calls_chosen)
        for name in defined:
            definitions[name] = definitions.get(name, 0) + 1
        for name, functions in inside:
            callers.setdefault(name, set()).update(functions)
        returning.update(returns)
        via.update(calls_via)
    returners = chosen_row_returners(returning, definitions)
    for key, returner, function in via:
        if returner not in returners:
            callers.setdefault(key, set()).add(function)  # a record of unknown choice: a plain call
        elif locked:
            unlocked.add(key)  # rows a filter chose, read without a lock
        else:
            guarded.add(key)
    keys: dict[str, set[str]] = {}  # function name -> the keys its calls are made under
    for key in guarded | unlocked | callers.keys():
        keys.setdefault(_base(key), set()).add(key)
    targets = set(keys) | {  # each function name called, and each class's own definition of one
        name for name in definitions if "." in name and _base(name) in keys
    }
    candidates = {t for t in targets if _base(t) not in used and definitions.get(t) == 1}
    reaching = {  # the calls that may run each candidate: its own class's, and those of unknown or inheriting class
        t: {k for k in keys.get(_base(t), ()) if "." not in t or k == t or "." not in k or not definitions.get(k)}
        for t in candidates
    }
    candidates = {t for t in candidates if not reaching[t] & unlocked}
    decided: set[str] = set()

    def is_decided(function: str) -> bool:
        return function in decided or _base(function) in decided

    while True:  # every call in a decided function (or the function itself) is decided: follow to the end
        more = set()
        for target in candidates - decided:
            making = {f for k in reaching[target] for f in callers.get(k, ())}
            if all(is_decided(f) or f == target for f in making) and (
                reaching[target] & guarded or any(is_decided(f) for f in making)
            ):
                more.add(target)
        if not more:
            return frozenset(decided)
        decided |= more


def _calls_in(body: list[ast.stmt], tested: tuple[str, ...]) -> Iterator[tuple[ast.Call, str, str]]:
    """Each call in a block (not in nested functions), and whether it is made under a lock or
    on a record a state filter chose. `tested`: those records so far (as written), and `_LOCKED`."""
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(statement, (ast.If, ast.While)):  # a test is no lock: what it guards is decided only as before
            yield from _calls_of(statement.test, tested)
            yield from _calls_in(statement.body, tested)
            yield from _calls_in(statement.orelse, tested)
            tested = _forget(statement, tested)
            continue
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            yield from _calls_of(statement.iter, tested)
            chosen = (_key(statement.target),) if chosen_by_state(statement.iter) else ()
            owner = rows_class(statement.iter)
            typed = (f"{_OF}{owner} {_key(statement.target)}",) if owner else ()
            yield from _calls_in(statement.body, tested + chosen + typed)
            yield from _calls_in(statement.orelse, tested)
            tested = _forget(statement, tested)
            continue
        if isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                yield from _calls_of(item.context_expr, tested)
            locks = any(_takes_shared_lock(item.context_expr) for item in statement.items)
            yield from _calls_in(statement.body, (*tested, _LOCKED) if locks else tested)
            tested = _forget(statement, tested)
            continue
        if isinstance(statement, ast.Try) or type(statement).__name__ == "TryStar":
            for block in (statement.body, *(h.body for h in statement.handlers), statement.orelse, statement.finalbody):  # type: ignore[attr-defined]
                yield from _calls_in(block, tested)
            tested = _forget(statement, tested)
            continue
        if isinstance(statement, ast.Match):
            yield from _calls_of(statement.subject, tested)
            for case in statement.cases:
                yield from _calls_in(case.body, tested)
            tested = _forget(statement, tested)
            continue
        yield from _calls_of(statement, tested)
        if isinstance(statement, ast.Assign):
            tested = _bound(statement, tested)
        if _locks_rows(statement):
            tested = (*tested, _ROW_LOCKED)  # `select_for_update().get(...)`: the rest of the block holds the row


def _forget(statement: ast.stmt, tested: tuple[str, ...]) -> tuple[str, ...]:
    """`tested` after a compound statement: a record it binds again in some branch (`if
    replacement: req = replacement`) may no longer be the one a filter chose or a function
    returned."""
    keys = {
        _key(target)
        for node in ast.walk(statement)
        for target in (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AugAssign, ast.AnnAssign, ast.NamedExpr, ast.For, ast.AsyncFor))
            else [item.optional_vars for item in node.items if item.optional_vars is not None]
            if isinstance(node, (ast.With, ast.AsyncWith))
            else []
        )
    }
    return tuple(t for t in tested if t not in keys and _record_of(t) not in keys)


def _record_of(held: str) -> str:
    """The record a `returned by`/`of class` entry of `tested` is about ('' for others)."""
    for prefix in (_VIA, _OF):
        if held.startswith(prefix):
            return held[len(prefix) :].split(" ", 1)[-1]
    return ""


def _bound(statement: ast.Assign, tested: tuple[str, ...]) -> tuple[str, ...]:
    """`tested` after an assignment: a record read under the named lock, a record a state
    filter chose (`req = Request.objects.get(pk=pk, state=PENDING)`), or one a function
    returned (`req = barrier.get_active_request()`: decided if that function returns only such
    rows); a name bound again holds none of these any more."""
    keys = {_key(t) for t in statement.targets}
    tested = tuple(t for t in tested if t not in keys and _record_of(t) not in keys)
    value = statement.value
    owner = record_class(value) if len(keys) == 1 else ""
    if owner:
        tested = (*tested, f"{_OF}{owner} {next(iter(keys))}")
    if _LOCKED in tested:
        return (*tested, *(_READ_UNDER_LOCK + key for key in keys))
    how = _chosen_or_returned(value) if isinstance(value, ast.Call) and len(keys) == 1 else _PLAIN
    if how == _CHOSEN:
        return (*tested, *keys)
    return (*tested, f"{how} {keys.pop()}") if how.startswith(_VIA) else tested


def _calls_of(node: ast.AST, tested: tuple[str, ...]) -> Iterator[tuple[ast.Call, str, str]]:
    """The calls in a statement or expression, each with how it is made and the class of the
    record it is made on ('' where unknown); one in a lambda (`on_commit(lambda: r.reject())`)
    runs later, when the lock is gone, and is never decided."""
    later = {id(n) for lam in ast.walk(node) if isinstance(lam, ast.Lambda) for n in ast.walk(lam.body)}
    for call in ast.walk(node):
        if isinstance(call, ast.Call):
            yield call, _LATER if id(call) in later else _how(call, tested), _receiver_class(call, tested)


def _how(call: ast.Call, tested: tuple[str, ...]) -> str:
    records = [call.func.value] if isinstance(call.func, ast.Attribute) else []
    records += [arg for arg in (*call.args, *(k.value for k in call.keywords))]
    if _is_super(call.func):
        return _LATER  # the parent's method: the override's own callers decide nothing here
    if _ROW_LOCKED in tested or _LOCKED in tested and _read_under_lock(call, tested):
        return _LOCKED_CALL
    if _LOCKED in tested or bool(tested) and any(_key(record) in tested for record in records):
        return _CHOSEN  # a filter's rows, or a record read before the named lock: no lock on its read
    if isinstance(call.func, ast.Attribute) and isinstance(call.func.value, ast.Call):
        return _chosen_or_returned(call.func.value)  # `Req.objects.pending(b).accept()`
    returned = [_returner(record, tested) for record in records]
    return next((_VIA + r for r in returned if r), _PLAIN)


def _receiver_class(call: ast.Call, tested: tuple[str, ...]) -> str:
    """The class of the record a method is called on, where its binding says it (`review =
    get_object_or_404(Review, ...)`, `for r in Review.objects.filter(...)`, `self` in a method
    of `Review`) or the call that gives it does (`Review.objects.get(pk=pk).decline()`)."""
    if not isinstance(call.func, ast.Attribute):
        return ""
    receiver = call.func.value
    if isinstance(receiver, ast.Call):
        return record_class(receiver)
    key = _key(receiver)
    return next((t[len(_OF) :].split(" ", 1)[0] for t in tested if t.startswith(_OF) and _record_of(t) == key), "")


def _chosen_or_returned(query: ast.Call) -> str:
    """How a call on the record another call gives is made: on rows a state filter chose, on
    what some function returned, or plainly."""
    name = called_name(query)
    if name in NOT_ROWS:
        return _PLAIN
    if query_chooses_state(query):
        return _CHOSEN
    return _VIA + name if name and name not in ROW_QUERY_METHODS else _PLAIN


def _returner(record: ast.expr, tested: tuple[str, ...]) -> str:
    """The function that returned the record a call is given, as `tested` holds it, or ''."""
    key = _key(record)
    for held in tested:
        if held.startswith(_VIA) and held.endswith(" " + key):
            return held[len(_VIA) : -len(key) - 1]
    return ""


def _read_under_lock(call: ast.Call, tested: tuple[str, ...]) -> bool:
    """The record a call acts on was read under the named lock: bound in its block
    (`order = Order.objects.get(pk=pk)`, then `order.cancel()`) or read in the call itself
    (`Order.objects.get(pk=pk).cancel()`)."""
    if not isinstance(call.func, ast.Attribute):
        return False
    record = call.func.value
    return isinstance(record, ast.Call) or _READ_UNDER_LOCK + _key(record) in tested


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


def _names_a_lock(decorator: ast.expr) -> bool:
    """`@huey.lock_task("name")`: every run of the function holds the lock, its calls with it.
    Called with the lock's name or key: a bare `@locked` takes an object's own lock."""
    if not isinstance(decorator, ast.Call) or not (decorator.args or decorator.keywords):
        return False
    name = dotted_name(decorator.func)
    return name is not None and names_a_lock_decorator(name)


def _key(expr: ast.AST) -> str:
    """A record as written (`req`, `self.paper`), the same read or assigned."""
    return ast.unparse(expr)
