"""Hand-written retry loops that go round again at once after a failure, with no wait at all.

A wait with no random part sends clients back in waves (IDM202's `fixed-wait`); no wait sends
them back at the same instant, against a service that just failed. A loop retries at once
where a handler that sends it round (it does not leave) is followed, on its way round, by no
sleep: not in the handler, not in the loop outside the `try` (a sleep in a sibling handler,
for a rate limit, does not wait for this one). Left alone:
- a loop of at most two attempts (`range(2)`): one quick retry of a stale connection;
- a handler that does something about the failure first (reconnects, refreshes a token, moves
  to the next node, drops the connection: `del self.connection`): the next attempt is not the
  same one;
- a failure of a lost race (a write conflict): the loop re-reads and tries again;
- a consumer's wait that ended with nothing to take (`except DequeueTimeout:`);
- a handler that catches everything around work that is not a call to another system (a
  client, a session, a connection, a stub or a socket): a local step retried.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, iter_nodes, local_callee
from idemlint.analysis.policy.common import (
    caught_expression,
    expr_nodes,
    handler_around,
    handler_catches_all,
    local_database_errors,
)
from idemlint.analysis.retry import SLEEPS, always_leaves
from idemlint.analysis.retry.exits import guarded_continue
from idemlint.analysis.retry.not_ready import means_not_ready
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.http import NETWORK_ERRORS
from idemlint.knowledge.retries import (
    LOST_RACE_ERRORS,
    RECOVERY,
    REMOTE_RECEIVER,
    SHARED_CLIENT,
    TIMEOUT_WRAPPERS,
    WAIT_WORDS,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def immediate_retry(model: ModuleModel, loop: cst.For | cst.While, nodes: list[cst.CSTNode]) -> cst.CSTNode | None:
    """The handler of a retry loop that sends it round at once, or None (see the module)."""
    if _few_attempts(model, loop, nodes):
        return None
    for try_node in nodes:
        if not isinstance(try_node, cst.Try):
            continue
        siblings: list[cst.ExceptHandler] = list(try_node.handlers)
        for handler in siblings:
            handled = list(handler.body.body)  # "if attempt < n: continue; raise" goes round too
            if (
                always_leaves(handled)
                and not _counted_continue(model, handled)
                or not _fails_remotely(model, handler, try_node)
            ):
                continue
            if _recovers(model, handler) or waits_on_the_way_round(model, loop.body, siblings, handler):
                continue
            return handler
    return None


def _counted_continue(model: ModuleModel, handled: list[cst.CSTNode]) -> bool:
    """`if attempt < n: continue` then `raise`: a guard that only compares an attempt with a
    bound above two and only logs before going round. A guard that asks a helper (`if
    policy.allowed():`) or calls one before `continue` (a wait, a new session) is judged by
    what it calls; `if attempt < 1:` allows two attempts, one quick retry of a stale connection."""
    if not guarded_continue(handled):
        return False
    for statement in handled:
        if not isinstance(statement, cst.If):
            continue
        if any(isinstance(node, cst.Call) for node in (statement.test, *iter_nodes(statement.test))):
            return False
        test = statement.test
        bounds = [_number(c.comparator) for c in test.comparisons] if isinstance(test, cst.Comparison) else []
        if bounds and all(b is not None and b <= 2 for b in bounds):
            return False  # `if attempt < 1:`, `if tries < 2:`: two attempts at most
        for node in iter_nodes(statement.body):
            if isinstance(node, cst.Call) and not LOGGING_CALL.match(model.dotted(node.func) or ""):
                return False
            if isinstance(node, (cst.Assign, cst.AugAssign)):
                return False
    return True


def immediate_recursion(
    model: ModuleModel, function: cst.FunctionDef, handler: cst.CSTNode, again: cst.CSTNode
) -> bool:
    """A recursive retry (`again` calls the function anew from `handler`: an `except`, or a
    test that the answer is retryable) with no wait anywhere in the function and nothing done
    about the failure first."""
    catching = handler_around(model, again)
    if isinstance(catching, cst.ExceptHandler) and model.is_inside(catching, function):  # the caught error says
        owner = model.parents.get(catching)
        if not isinstance(owner, cst.Try) or not _fails_remotely(model, catching, owner):
            return False
    return not _recovers(model, handler, again) and not waits_on_the_way_round(model, function.body, [], handler)


def _few_attempts(model: ModuleModel, loop: cst.For | cst.While, nodes: list[cst.CSTNode]) -> bool:
    """`for attempt in range(2)` (or `range(1, 3)`), or `tries_left = 2` counted down in the
    loop (`tries_left -= 1`) and tested there (`if tries_left == 0: raise`, `while tries_left:`):
    at most two attempts."""
    if isinstance(loop, cst.While):
        tested = model.names_read(loop.test) | {
            name for node in nodes if isinstance(node, cst.If) for name in model.names_read(node.test)
        }
        counted_up = {  # `attempt += 1` with a compensating `attempt -= 1`: a count up, not a budget
            n.target.value
            for n in nodes
            if isinstance(n, cst.AugAssign) and isinstance(n.operator, cst.AddAssign) and isinstance(n.target, cst.Name)
        }
        for node in nodes:
            if isinstance(node, cst.AugAssign) and isinstance(node.operator, cst.SubtractAssign):
                if isinstance(node.target, cst.Name) and node.target.value in tested - counted_up:
                    start = model.bindings_of(model.scope_of(loop), node.target.value)
                    first = [b.value for b in start if b.kind == "assign" and not model.is_inside(b.statement, loop)]
                    if (
                        len(first) == 1
                        and first[0] is not None
                        and (count := _number(first[0])) is not None
                        and count <= 2
                    ):
                        return True
        return False
    call = loop.iter
    if not isinstance(call, cst.Call) or not call.args or len(call.args) > 2:
        return False
    numbers = [_number(a.value) for a in call.args]
    if None in numbers:
        return False
    ends = [n for n in numbers if n is not None]
    return (ends[-1] - (ends[0] if len(ends) == 2 else 0)) <= 2


def _number(node: cst.BaseExpression) -> int | None:
    """An integer literal as Python reads it (`2`, `0x5`, `0b101`, `1_000`)."""
    if not isinstance(node, cst.Integer):
        return None
    try:
        return int(node.value, 0)
    except ValueError:
        return None


def _fails_remotely(model: ModuleModel, handler: cst.ExceptHandler, try_node: cst.Try) -> bool:
    """The handler catches a network failure by name, or everything (or a bare timeout)
    around a call to another system."""
    caught_type = caught_expression(model, handler)
    if caught_type is not None:
        caught = " ".join(model.qualname(n) or "" for n in expr_nodes(caught_type) if isinstance(n, cst.BaseExpression))
        if LOST_RACE_ERRORS.search(caught) or local_database_errors(model, caught_type):
            return False  # a lost race, or a database file of this machine (`sqlite3.OperationalError`)
        names = [  # the classes caught, not the modules that hold them (`concurrent.futures`)
            name
            for e in expr_nodes(caught_type)
            if isinstance(e, cst.Name | cst.Attribute)
            and (name := (model.dotted(e) or "").rsplit(".", 1)[-1])[:1].isupper()
        ]
        if means_not_ready(model, handler):
            return False  # `except DequeueTimeout:` the take itself waited, and nothing failed
        # a timeout of no network library (the builtin, asyncio's, concurrent.futures', a lock's)
        bare_timeout = all(name in ("Timeout", "TimeoutError") for name in names) and not NETWORK_ERRORS.search(
            re.sub(r"Timeout(Error)?", "", caught)
        )
        if NETWORK_ERRORS.search(caught) and not bare_timeout:
            return True
        if not bare_timeout and not handler_catches_all(model, handler):
            return False
    # everything, or a bare timeout (a future's `result(10)`, a lock's `acquire(timeout=...)`):
    # only around a call on a client, session or connection
    return any(
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and REMOTE_RECEIVER.search(model.dotted(node.func.value) or "")
        for node in iter_nodes(try_node.body)
    )


def _recovers(model: ModuleModel, handler: cst.CSTNode, again: cst.CSTNode | None = None) -> bool:
    """The handler does something about the failure before the next attempt (beyond `again`,
    the attempt it makes anew): reconnects, refreshes a token (also in the test that sends it
    round: `if r.status_code == 401 and self.login():`), moves to the next node, drops the
    connection or the token it holds. Counting a metric or logging is not that."""
    skipped = set(iter_nodes(again)) | {again} if again is not None else set()
    tested = [handler.test, *iter_nodes(handler.test)] if isinstance(handler, cst.If) else []  # `and self.login()`
    for node in [*tested, *iter_nodes(getattr(handler, "body", handler))]:
        if isinstance(node, cst.Del) or _drops_a_client(model, node):
            return True  # `del self.connection`, `self._client = None`: the next attempt connects anew
        if isinstance(node, cst.Call) and node not in skipped:
            name = model.call_name(node) or model.dotted(node.func) or ""
            if RECOVERY.search(name.rsplit(".", 1)[-1]):
                return True  # a reconnect, a token refreshed, the next node: not a metric counted
    return False


def _drops_a_client(model: ModuleModel, node: cst.CSTNode) -> bool:
    """`self._client = None`, or `AUTH_TOKEN = None` of a shared name (declared `global` or
    `nonlocal`) that says it holds a client or credentials: state the next attempt builds anew."""
    return any(attribute or SHARED_CLIENT.search(name) for name, attribute in dropped_state(model, node))


def dropped_state(model: ModuleModel, node: cst.CSTNode) -> list[tuple[str, bool]]:
    """What an assignment of None drops, as (name, whether an attribute): `self._token = None`,
    or a name the function declares `global` (or `nonlocal`); not a local."""
    if not (isinstance(node, cst.Assign) and isinstance(node.value, cst.Name) and node.value.value == "None"):
        return []
    function = model.enclosing_function(node)
    shared = {
        name.name.value
        for declared in (iter_nodes(function.body) if function is not None else ())
        if isinstance(declared, (cst.Global, cst.Nonlocal))
        for name in declared.names
    }
    found = [(t.target.attr.value, True) for t in node.targets if isinstance(t.target, cst.Attribute)]
    return found + [
        (t.target.value, False) for t in node.targets if isinstance(t.target, cst.Name) and t.target.value in shared
    ]


def waits_on_the_way_round(
    model: ModuleModel, body: cst.CSTNode, siblings: list[cst.ExceptHandler], handler: cst.CSTNode
) -> bool:
    """A wait on the way round after `handler`: anywhere in the loop's (or function's) body
    but the handler's siblings, which wait for other failures."""
    others = [h for h in siblings if h is not handler]
    for node in iter_nodes(body):
        if not isinstance(node, cst.Call) or any(model.is_inside(node, h) for h in others):
            continue
        name = model.call_name(node) or model.dotted(node.func) or ""
        if name in TIMEOUT_WRAPPERS:
            continue  # `asyncio.wait_for(call, timeout=5)` bounds the attempt; it does not wait after it
        called = name.rsplit(".", 1)[-1]
        if name in SLEEPS or sleeps_inside(model, node):
            return True
        if WAIT_WORDS.search(called) and not re.match(r"_?(is|should|can|has)_", called):  # not `is_retryable()`
            return True
    return False


def sleeps_inside(model: ModuleModel, call: cst.Call) -> bool:
    """A call to a function of this module that sleeps (`def sleep(ms): time.sleep(ms / 1000)`)."""
    helper = local_callee(model, call)
    return helper is not None and any(
        isinstance(node, cst.Call) and model.call_name(node) in SLEEPS for node in iter_nodes(helper.body)
    )
