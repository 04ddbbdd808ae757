"""Retry handlers that hand what they caught to a function of the project that judges it.

`except Exception as exc: next_sleep = _on_error(exc, deadline, predicate)`: where `_on_error`
may raise (its summary's `gives_up`), the handler goes round only when it returns. It decides
which errors are retried, so the handler does not retry every exception (IDM201); where it is
also handed a bound (a deadline, an attempt count), it owns the loop's bound (IDM203), as a
test on the loop's counter would. A recursive retry's handler that judges before it calls the
function again is read the same (IDM201)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.policy.common import expr_nodes
from idemlint.analysis.retry.exits import always_leaves, loop_nodes

# what bounds a loop as a whole (not `timeout=`, which bounds one attempt)
DEADLINE_WORDS = re.compile(r"deadline|give_?up|expired|max_(attempts|tries|retries)|start_time|attempt", re.I)
# of them, the names of a point in time: one the loop moves never comes (a count it steps does)
MOVED_DEADLINE = re.compile(r"deadline|expire|start_time|until", re.I)

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.policy.records import Policy
    from idemlint.analysis.summaries import Callee
else:
    cst = LazyModule("libcst", globals(), "cst")


def drop_delegated_judgements(
    model: ModuleModel,
    loop: cst.For | cst.While,
    policy: Policy,
    callee: Callable[[cst.Call], Callee | None],
    counters: frozenset[str] = frozenset(),
) -> None:
    """Take back the catch-all (or status-error-class) verdict of each handler a judging helper answers, and the
    no-bound verdict where every handler that goes round hands a deadline or the count to a
    helper that may raise: one that judges the error it is handed, or one that raises once
    the count it is handed says so."""
    judged: dict[cst.CSTNode, cst.Call] = {}
    rounds = [
        n for n in loop_nodes(model, loop) if isinstance(n, cst.ExceptHandler) and not always_leaves(list(n.body.body))
    ]
    for handler in rounds:
        call = _judging_call(model, handler, callee)
        if call is not None:
            judged[handler] = call
    policy.catches_all[:] = [v for v in policy.catches_all if v.node not in judged]
    policy.non_retryable_statuses[:] = [
        v for v in policy.non_retryable_statuses if v.kind != "status-error-class" or v.node not in judged
    ]
    if rounds and all(
        handler in judged
        and _hands_a_bound(model, judged[handler], counters, loop)
        or _counts_to_a_raise(model, handler, callee, counters, loop)
        for handler in rounds
    ):
        policy.unbounded[:] = [v for v in policy.unbounded if v.kind != "no-bound"]


def drop_judged_recursion(model: ModuleModel, policy: Policy, callee: Callable[[cst.Call], Callee | None]) -> None:
    """A recursive retry's handler that hands what it caught to a judging helper before it calls
    the function again decides, as a loop's does, which errors are retried (IDM201)."""
    judged = {
        v.node
        for v in (*policy.catches_all, *policy.non_retryable_statuses)
        if isinstance(v.node, cst.ExceptHandler) and _judging_call(model, v.node, callee) is not None
    }
    if judged:
        policy.catches_all[:] = [v for v in policy.catches_all if v.node not in judged]
        policy.non_retryable_statuses[:] = [v for v in policy.non_retryable_statuses if v.node not in judged]


def _judging_call(
    model: ModuleModel, handler: cst.ExceptHandler, callee: Callable[[cst.Call], Callee | None]
) -> cst.Call | None:
    """The call, in a statement of the handler's own block (not under an `if` or a `try`), that
    hands what was caught to a project function that may raise it (`gives_up`):
    `time.sleep(on_error(exc, deadline))`."""
    caught = handler.name.name if handler.name is not None else None
    if not isinstance(caught, cst.Name):
        return None
    for call in _own_calls(model, handler):
        if any(isinstance(a.value, cst.Name) and a.value.value == caught.value for a in call.args):
            found = callee(call)
            if found is not None and found.summary.gives_up is not None:
                return call
    return None


def _counts_to_a_raise(
    model: ModuleModel,
    handler: cst.ExceptHandler,
    callee: Callable[[cst.Call], Callee | None],
    counters: frozenset[str],
    loop: cst.CSTNode,
) -> bool:
    """The handler hands the loop's count or a deadline to a project function that raises once
    that parameter says so (`raises_past`, `past_params`: `_check_attempts(attempt, limit)` with `if attempt >
    limit: raise`), in a call that runs whenever the handler does (not `strict and check(...)`)."""
    for call in _own_calls(model, handler):
        found = callee(call)
        if found is None or not found.summary.raises_past or not _runs_with_its_statement(model, call):
            continue
        position = 0
        for arg in call.args:
            slot = arg.keyword.value if arg.keyword is not None else f"#{position}"
            position += arg.keyword is None
            if found.summary.slot_name(slot) in found.summary.past_params and _hands_a_bound(
                model, call, counters, loop, only=arg
            ):
                return True
    return False


def _own_calls(model: ModuleModel, handler: cst.ExceptHandler) -> list[cst.Call]:
    """The calls in statements of the handler's own block (not under an `if`, a `try`, a loop:
    they may not run)."""
    return [
        node
        for line in handler.body.body
        if isinstance(line, cst.SimpleStatementLine)
        for node in model.iter_nodes(line)
        if isinstance(node, cst.Call)
    ]


def _runs_with_its_statement(model: ModuleModel, call: cst.Call) -> bool:
    """Nothing between the call and its statement may skip it: it is the statement, a value
    assigned or awaited, or an argument of such a call (not `a and f()`, `f() if x else y`)."""
    node: cst.CSTNode = call
    while not isinstance(node, cst.SimpleStatementLine):
        parent = model.parents.get(node)
        if parent is None or type(parent).__name__ not in _CARRIERS:
            return False
        node = parent
    return True


# what may stand between a call and its statement without deciding whether it runs (libcst's
# node classes by name: this module is imported before libcst is)
_CARRIERS = frozenset({"SimpleStatementLine", "Expr", "Assign", "AnnAssign", "AugAssign", "Await", "Arg", "Call"})


def _hands_a_bound(
    model: ModuleModel, call: cst.Call, counters: frozenset[str], loop: cst.CSTNode, only: cst.Arg | None = None
) -> bool:
    """`on_error(exc, deadline, ...)`, `judge(err, attempts=n, max_attempts=m)`; not a request's
    own `timeout=`, which bounds one attempt, not the loop, nor a deadline the loop moves (`deadline
    = time.monotonic() + 30` or `deadline += 30` each round): it never comes."""
    moved = model.bound_inside(loop) - {c for c in counters if not MOVED_DEADLINE.search(c)}
    args = [only] if only is not None else list(call.args)
    handed = [n for arg in args for n in expr_nodes(arg.value) if isinstance(n, (cst.Name, cst.Attribute))]
    if any(isinstance(n, cst.Name) and n.value in moved for n in handed):
        return False
    return any(
        DEADLINE_WORDS.search(model.dotted(n) or "") or isinstance(n, cst.Name) and n.value in counters for n in handed
    ) or any(arg.keyword is not None and DEADLINE_WORDS.search(arg.keyword.value) for arg in args)
