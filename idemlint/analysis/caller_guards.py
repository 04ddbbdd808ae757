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
`Review.objects.filter(...)`) may run only that class's method, or one it inherits; a call on
a record of unknown class may run any of them (`self` too: a subclass may override the method),
so it can refute a class's method's precondition but not show it. A call in a Django admin
action (`def mark_paid(modeladmin, request, queryset)`) is the operator's choice of rows and
state, decided as rows a filter chose are (`knowledge/roles.is_admin_action`). A call inside the
function itself (recursion) runs in a run already decided. Under a named lock (`with
cache.lock(key):`), a call on a record read inside the lock holds it as the row's lock would,
for IDM101 too; on a record read before the lock, only as the callers' precondition (the test
inside may be stale). In a file whose bytes show no state test, no lock, no admin action, no call of a method it
defines and no call on a record another call just gave, every identifier outside comments and
prose counts as such a use (a regular expression reads them: `analysis/names_used.py`; one
reached through an imported module, `tasks.expire`, only as a module's function's); the rest are parsed with stdlib
`ast` (the parse the final-state evidence already made, where there is one). Names and class
names are all that is matched: a library's method of the same name called under a lock counts
as a call of it.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from collections.abc import Iterable

from idemlint.analysis.chosen_rows import (
    called_name,
    chosen_row_returners,
    returns_chosen_rows,
)
from idemlint.analysis.held_records import CHOSEN, LATER, LOCK, LOCKED_CALL, PLAIN, VIA, Records, calls_in
from idemlint.analysis.locked_rows import LockedReturns, locked_row_returners, returns_locked_rows
from idemlint.analysis.machines import decorator_name, dotted_name
from idemlint.analysis.names_used import FUNCTION_ONLY, defined_names, names_used, names_used_otherwise
from idemlint.analysis.syntax import stdlib_tree
from idemlint.knowledge.locks import names_a_lock_decorator
from idemlint.knowledge.roles import is_admin_action

# per file: (names of calls made only under a lock or on a record a state filter chose; those
# of them some call of which holds no lock (only the filter's choice); every other name the file
# calls at its top level, references, queues or spells in a string; the names it defines with
# `def`, with repeats; for each name called plainly inside functions, those functions' names:
# such a call is decided where every function making it is; the functions it defines that
# return only rows a state filter chose, each with the functions whose rows it returns in turn
# (`return self.get_draft(app)`); each call on a record some function returned, as (the name
# called, the function that returned the record, the function making the call): decided if
# that function returns only rows a state filter chose, plain otherwise; the functions it
# defines that return a row they loaded under a row lock, each with the functions whose rows it
# returns in turn: `analysis/locked_rows.py`)
CallFacts = tuple[
    frozenset[str],
    frozenset[str],
    frozenset[str],
    tuple[str, ...],
    tuple[tuple[str, tuple[str, ...]], ...],
    tuple[tuple[str, tuple[str, ...]], ...],
    tuple[tuple[str, str, str], ...],
    LockedReturns,
]
NO_CALLS: CallFacts = (frozenset(), frozenset(), frozenset(), (), (), (), (), ())

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
        b"for_update" in source
        or b"with_lockmode(" in source
        or (b"ock" in source or b"utex" in source)
        and _WITH_LOCK.search(source) is not None
        or (b"state" in source or b"status" in source)
        and _FOR_STATE.search(source) is not None
        or _CALL_ON_RETURNED.search(source) is not None
        or (b"modeladmin" in source or b"queryset" in source or b"admin.action" in source)
        and _ADMIN_ACTION.search(source) is not None
    )


# a Django admin action (`knowledge/roles.is_admin_action`): its calls are the operator's choice
_ADMIN_ACTION = re.compile(rb"def\s+\w+\(\s*(?:modeladmin\b|\w+\s*,\s*request\b[^,)]*,\s*queryset\b)|@admin\.action\b")


_CLASS_DEFINED = re.compile(rb"^[ \t]*class[ \t]+(\w+)", re.MULTILINE)
_CALLED = re.compile(rb"\.(\w+)\(")  # a method call: `signup.anonymize(`
_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CLASS = "class "  # among a file's definitions, `class Review`: a class name two modules define is no one class


def call_facts(source: bytes, tree: ast.Module | None) -> CallFacts:
    """One file's calls: which are decided (under a lock, on rows a state filter chose), and
    every other name it uses. `tree`: the file's parse where it shows a state test (or None).
    A file that shows a lock or a loop over a state filter, or calls a method it defines (which
    a decided function may call), is parsed here if it was not; the rest are read by a regular
    expression alone: their names are all they give."""
    defined = defined_names(source)
    if tree is None and (_may_decide(source) or not {n.encode() for n in defined}.isdisjoint(_CALLED.findall(source))):
        try:
            tree = stdlib_tree(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            tree = None
    if tree is None:
        classes = tuple(_CLASS + name.decode() for name in _CLASS_DEFINED.findall(source))
        return frozenset(), frozenset(), names_used(source, defined), defined + classes, (), (), (), ()
    guarded: set[str] = set()
    chosen: set[str] = set()
    other: set[str] = set()
    inside: dict[str, set[str]] = {}
    via: set[tuple[str, str, str]] = set()
    returning: list[tuple[str, tuple[str, ...]]] = []
    locked_returns: list[tuple[str, tuple[str, ...]]] = []
    may_lock = b"for_update" in source or b"with_lockmode" in source
    funcs: set[int] = set()
    owner_classes = {
        id(f): c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) for f in c.body if isinstance(f, _DEFS)
    }
    owners = {key: c.name for key, c in owner_classes.items()}
    defined += tuple(f"{owners[id(f)]}.{f.name}" for f in ast.walk(tree) if isinstance(f, _DEFS) and id(f) in owners)
    defined += tuple(_CLASS + c.name for c in ast.walk(tree) if isinstance(c, ast.ClassDef))
    for node in ast.walk(tree):
        if isinstance(node, _DEFS):
            held = {LOCK} if any(_names_a_lock(d) for d in node.decorator_list) else set()
            owner = owners.get(id(node), "")
            me = f"{owner}.{node.name}" if owner else node.name
            operator = is_admin_action(
                [a.arg for a in (*node.args.posonlyargs, *node.args.args)],
                [decorator_name(d) for d in node.decorator_list],
                [dotted_name(b) or "" for b in owner_classes[id(node)].bases] if id(node) in owner_classes else [],
            )
            for call, how, of in calls_in(node.body, Records(locks=held)):
                name = called_name(call)
                funcs.add(id(call.func))
                if not name:
                    continue
                if operator and how not in (LOCKED_CALL, LATER):
                    how = CHOSEN  # an admin action: the rows and the state are the operator's choice
                key = f"{of}.{name}" if of else name  # `Review.decline` where the record's class is known
                if isinstance(call.func, ast.Name):
                    key = FUNCTION_ONLY + name  # `decline(request, pk)`: a module's function, never a method
                if how in (LOCKED_CALL, CHOSEN):
                    guarded.add(key)
                    if how == CHOSEN:
                        chosen.add(key)
                elif how == PLAIN:
                    inside.setdefault(key, set()).add(me)
                elif how.startswith(VIA):
                    via.add((key, how[len(VIA) :], me))
                else:
                    other.add(name)  # in a lambda: it runs later, in no function's lock
            returned = returns_chosen_rows(node)
            if returned is not None:
                returning.append((node.name, returned))
            locked_through = returns_locked_rows(node) if may_lock else None
            if locked_through is not None:  # a method by its class's name for it: `OrderView.get_object`
                qualified = {t: f"{owner}.{t}" for t in locked_through if owner and f"{owner}.{t}" in defined}
                locked_returns.append((me, tuple(sorted(qualified.get(t, t) for t in locked_through))))
    other |= names_used_otherwise(tree, funcs)
    return (
        frozenset(k for k in guarded if _base(k) not in other),
        frozenset(k for k in chosen if _base(k) not in other),
        frozenset(other - {""}),
        defined,
        tuple(sorted((k, tuple(sorted(callers))) for k, callers in inside.items() if _base(k) not in other)),
        tuple(sorted(returning)),
        tuple(sorted(v for v in via if _base(v[0]) not in other)),
        tuple(sorted(locked_returns)),
    )


def _base(key: str) -> str:
    """The function name a key is for: `decline` of `Review.decline` (or of a module's)."""
    return key.rsplit(".", 1)[-1].removeprefix(FUNCTION_ONLY)


def join_call_facts(files: Iterable[CallFacts], locked: bool = False) -> frozenset[str]:
    """The names of the functions the project calls only under a lock, on rows a state filter
    chose, or from functions that are themselves so called (`_change_state` locks the ticket and
    calls `self._finish_or_next()`, which calls `self.set_active()`). With `locked`, only under
    a lock (the row's, or a named one each caller takes, as `with lock:` around a test and its
    write inline): rows a filter chose were read without one, so a test on the record may be stale."""
    guarded: set[str] = set()
    unlocked: set[str] = set()  # with `locked`, the calls made on rows a filter chose
    used: set[str] = set()
    callers: dict[str, set[str]] = {}
    returning: dict[str, tuple[str, ...]] = {}
    via: set[tuple[str, str, str]] = set()
    files = list(files)
    definitions = _definitions(files)
    twice = {name[len(_CLASS) :] for name, count in definitions.items() if name.startswith(_CLASS) and count > 1}

    def known(key: str) -> str:  # `Review.approve` as `approve` where two modules define a `Review`
        return _base(key) if key.split(".", 1)[0] in twice else key

    for calls_guarded, calls_chosen, calls_other, _defined, inside, returns, calls_via, _locked in files:
        guarded.update(map(known, calls_guarded))
        used.update(calls_other)
        if locked:
            unlocked.update(map(known, calls_chosen))
        for name, functions in inside:
            callers.setdefault(known(name), set()).update(map(known, functions))
        returning.update(returns)
        via.update((known(key), returner, known(function)) for key, returner, function in calls_via)
    returners = chosen_row_returners(returning, definitions)
    locked_returners = _by_either_name(locked_row_returners((facts[7] for facts in files), definitions), definitions)
    for key, returner, function in via:
        if returner in locked_returners:
            guarded.add(key)  # `table = handler.get_table_for_update(pk)`: read under the row's lock
        elif returner not in returners:
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
    candidates = {  # a name a module's function only may be used by says nothing of a method
        t
        for t in targets
        if _base(t) not in used and ("." in t or FUNCTION_ONLY + t not in used) and definitions.get(t) == 1
    }

    def may_run(key: str, target: str) -> bool:  # its own class's call, and those of unknown or inheriting class
        if "." not in target:
            return True
        return not key.startswith(FUNCTION_ONLY) and (key == target or "." not in key or not definitions.get(key))

    reaching = {t: {k for k in keys.get(_base(t), ()) if may_run(k, t)} for t in candidates}
    candidates = {t for t in candidates if not reaching[t] & unlocked}
    decided: set[str] = set()

    def is_decided(function: str) -> bool:
        return function in decided or _base(function) in decided

    while True:  # every call in a decided function (or the function itself) is decided: follow to the end
        more = set()
        for target in candidates - decided:
            making = {f for k in reaching[target] for f in callers.get(k, ())}
            # a class's own method is shown decided by a call on a record of that class; one on a
            # record of unknown class may run it too, so it can refute (not show) the precondition
            own = {target} if "." in target else reaching[target]
            if all(is_decided(f) or f == target for f in making) and (
                own & guarded or any(is_decided(f) for k in own for f in callers.get(k, ()))
            ):
                more.add(target)
        if not more:
            return frozenset(decided)
        decided |= more


def _by_either_name(functions: frozenset[str], definitions: dict[str, int]) -> frozenset[str]:
    """The functions, also by their own name where every method of that name is one of them
    (`get_table_for_update` for `TableHandler.get_table_for_update`, as a call on an object spells it)."""
    methods = [name for name in definitions if "." in name and not name.startswith(_CLASS)]
    bare = {_base(f) for f in functions if "." in f}
    return functions | {
        b
        for b in bare
        if all(m in functions for m in methods if _base(m) == b)
        and definitions.get(b, 0) == sum(1 for m in methods if _base(m) == b)  # no module function of the name
    }


def _names_a_lock(decorator: ast.expr) -> bool:
    """`@huey.lock_task("name")`: every run of the function holds the lock, its calls with it.
    Called with the lock's name or key: a bare `@locked` takes an object's own lock."""
    if not isinstance(decorator, ast.Call) or not (decorator.args or decorator.keywords):
        return False
    name = dotted_name(decorator.func)
    return name is not None and names_a_lock_decorator(name)


def join_locked_returns(files: Iterable[CallFacts]) -> frozenset[str]:
    """The functions every definition of which returns a row it loaded under a row lock
    (`analysis/locked_rows.py`), over the project's files."""
    files = list(files)
    return locked_row_returners((facts[7] for facts in files), _definitions(files))


def _definitions(files: list[CallFacts]) -> dict[str, int]:
    """How many times the project defines each name (`Review.decline` by its class too)."""
    return dict(Counter(name for facts in files for name in facts[3]))
