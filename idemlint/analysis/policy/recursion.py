"""A recursive retry (`except X: return self._request(..., retries=retries - 1)`, found by
`retry.recursive_retry`): its handler and its wait are judged as a loop's are, the wait also
in a helper the handler calls to call the function again (`_retry_request`). The handler that
calls the function again is what retries: a catch-all there retries every exception (IDM201),
and a sleep there with no random part waits the same for every client (IDM202), as does no
wait at all (`policy.no_wait`). A sleep on
the way to the first attempt paces requests. A recursion under a test that the answer is
retryable (`if is_retryable(status): sleep(2); return self.get(...)`) is judged by its sleeps; it is not a wait between attempts. One that
hands itself the arguments it was given and counts no attempts anywhere (`return
get_token(client_id, secret, url)`) is bounded by nothing but the recursion limit (IDM203)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.policy.common import handler_catches_all, status_error_caught
from idemlint.analysis.policy.delays import SettingCall, deterministic_delay, no_setting
from idemlint.analysis.policy.loops import reraised_before
from idemlint.analysis.policy.no_wait import immediate_recursion
from idemlint.analysis.policy.records import Policy, Verdict
from idemlint.analysis.policy.sorting import filters_exception, sorted_by_marking
from idemlint.analysis.retry.answers import says_retryable
from idemlint.analysis.retry.recursive_calls import counts_attempts
from idemlint.knowledge.retries import RECURSION, SLEEPS, is_attempt_counter

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.retry import RetryContext
else:
    cst = LazyModule("libcst", globals(), "cst")


def read_recursion(
    model: ModuleModel, context: RetryContext, policy: Policy, setting: SettingCall = no_setting
) -> None:
    # the handler the call is made from, or a test that the answer is retryable; not a test of
    # the attempt count inside the handler (`except X: if retry > 0: return f(..., retry - 1)`)
    handler = next(
        (
            a
            for a in model.ancestors(context.anchor)
            if isinstance(a, cst.ExceptHandler)
            or (
                isinstance(a, cst.If)
                and model.is_inside(context.anchor, a.body)
                and not (_counts_down(a.test) and any(isinstance(h, cst.ExceptHandler) for h in model.ancestors(a)))
                and says_retryable(model, a.test)
            )
        ),
        None,
    )
    if handler is None or not model.is_inside(handler, context.node):
        return
    if (
        isinstance(handler, cst.ExceptHandler)
        and handler_catches_all(model, handler)
        and not filters_exception(handler)
        and not sorted_by_marking(model, handler)
    ):
        caught = "" if handler.type is None else model.dotted(handler.type) or "Exception"
        reraised = reraised_before(model, handler)
        kind = "catch-all-rest" if reraised else "catch-all-handler"
        policy.catches_all.append(Verdict(kind, RECURSION, handler, context.label, caught=caught, owner=reraised))
    elif (
        isinstance(handler, cst.ExceptHandler)
        and not filters_exception(handler)
        and not sorted_by_marking(model, handler)
        and (status_class := status_error_caught(model, handler))
    ):
        policy.non_retryable_statuses.append(
            Verdict("status-error-class", RECURSION, handler, context.label, caught=status_class)
        )
    waits = [*model.iter_nodes(handler.body), *(model.iter_nodes(context.by_way_of.body) if context.by_way_of else ())]
    for node in waits:  # the handler's, and the helper's that calls the function again
        if isinstance(node, cst.Call) and model.call_name(node) in SLEEPS and node.args:
            if deterministic_delay(model, node.args[0].value, setting):
                policy.no_jitter.append(Verdict("fixed-wait", RECURSION, node, context.label))
    if isinstance(context.node, cst.FunctionDef) and immediate_recursion(model, context.node, handler, context.anchor):
        policy.no_jitter.append(Verdict("no-wait", RECURSION, handler, context.label))
    if isinstance(context.node, cst.FunctionDef) and not counts_attempts(model, context.node):
        policy.unbounded.append(Verdict("no-bound", RECURSION, context.anchor, context.label))


def _counts_down(test: cst.BaseExpression) -> bool:
    """`retry > 0`, `attempts < MAX_ATTEMPTS`: an attempt counter ordered against a bound."""
    return (
        isinstance(test, cst.Comparison)
        and all(
            isinstance(c.operator, (cst.LessThan, cst.GreaterThan, cst.LessThanEqual, cst.GreaterThanEqual))
            for c in test.comparisons
        )
        and any(
            isinstance(side, cst.Name) and is_attempt_counter(side.value)
            for side in (test.left, *(c.comparator for c in test.comparisons))
        )
    )
