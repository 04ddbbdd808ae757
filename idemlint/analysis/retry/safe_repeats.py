"""Retry loops whose repeats cannot do the work twice: each follows an attempt the server
turned away (a 429), or the code goes round only for work it deems idempotent. The loop is
still a retry (its policy is judged); what it repeats is not a duplicate (IDM001, IDM301)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.retry.exits import always_leaves, ends_with_continue, guarded_continue, loop_nodes
from idemlint.analysis.retry.not_ready import goes_round_on_failure
from idemlint.analysis.syntax import excluded_values
from idemlint.knowledge.http import RATE_LIMIT_WORDS, REFUSED_STATUSES

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def goes_round_only_when_refused(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """`while True: r = send(); if r.status_code != 429 or n > max: break; sleep(...)`: the
    loop leaves on every answer but a refusal, and nothing else sends it round (no handler that
    goes round, no `continue`). Each repeat follows an attempt the server turned away."""
    nodes = loop_nodes(model, loop)
    if any(isinstance(n, cst.Continue) for n in nodes):
        return False
    tries = [n for n in nodes if isinstance(n, (cst.Try, cst.TryStar)) and goes_round_on_failure(model, n)]
    if tries:
        # `except APIError as e: wait = self._handle_rate_limit(e); if wait is None: break`:
        # every handler that goes round leaves first unless the error was a refusal
        if any(t.orelse is not None or not always_leaves(list(t.body.body)) for t in tries):
            return False  # an answer may send it round too (`if resp.status_code < 500: return`, then on)
        rounds = [h for t in tries for h in t.handlers if not always_leaves(list(h.body.body))]
        return bool(rounds) and all(_leaves_unless_refused(model, handler) for handler in rounds)
    return any(
        isinstance(statement, cst.If) and always_leaves(list(statement.body.body)) and _unless_refused(statement.test)
        for statement in loop.body.body
    )


def _leaves_unless_refused(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """A handler that, before anything else can send the loop round, leaves unless the error
    said "later": a test on its status (`if e.status != 429: raise`) or on what a rate-limit
    reading of it gave (`wait = handle_rate_limit(e)`; `if wait is None: break`)."""
    named: set[str] = set()
    for statement in handler.body.body:
        if isinstance(statement, cst.SimpleStatementLine):
            if any(isinstance(small, (cst.Continue, cst.Return, cst.Raise, cst.Break)) for small in statement.body):
                return False  # leaves or goes round before any test of the refusal
            for small in statement.body:
                if (
                    isinstance(small, cst.Assign)
                    and isinstance(small.value, cst.Call)
                    and RATE_LIMIT_WORDS.search(model.call_name(small.value) or "")
                ):
                    named |= {t.target.value for t in small.targets if isinstance(t.target, cst.Name)}
            continue
        if isinstance(statement, cst.If) and always_leaves(list(statement.body.body)):
            if _unless_refused(statement.test) or _no_wait_given(statement.test, named):
                return True
        return False  # a statement that may go round, or a test on something else
    return False


def _no_wait_given(test: cst.BaseExpression, named: set[str]) -> bool:
    """`wait is None`, `not wait` (alone or as one side of an `or`) for a rate-limit reading's
    result: true when the error was no refusal."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _no_wait_given(test.left, named) or _no_wait_given(test.right, named)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return isinstance(test.expression, cst.Name) and test.expression.value in named
    return (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and test.left.value in named
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.Is)
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    )


_IDEMPOTENCY_WORDS = re.compile(r"idempotent", re.I)


def gated_on_idempotency(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """Every handler of the loop that goes round decides by the operation's idempotency
    whether to (`if operation in NON_IDEMPOTENT_OPERATIONS or attempt == last: raise`, `if
    is_idempotent(method): continue`): the code itself retries only what is safe to repeat.
    An error class named for idempotency (`IdempotencyError`) says nothing of the operation."""
    rounds = [
        handler
        for handler in loop_nodes(model, loop)
        if isinstance(handler, (cst.ExceptHandler, cst.ExceptStarHandler))
        and not always_leaves(list(handler.body.body))
    ]
    return bool(rounds) and all(_gated(model, handler) for handler in rounds)


def _gated(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    for node in model.iter_nodes(handler.body):
        if isinstance(node, cst.If) and _names_idempotency(model, node.test):
            body = list(node.body.body)
            if always_leaves(body) or guarded_continue(body) or ends_with_continue(body):
                return True
    return False


def _names_idempotency(model: ModuleModel, test: cst.BaseExpression) -> bool:
    for node in (test, *model.iter_nodes(test)):
        word = node.value if isinstance(node, cst.Name) else node.attr.value if isinstance(node, cst.Attribute) else ""
        if (
            _IDEMPOTENCY_WORDS.search(word)
            or isinstance(node, cst.SimpleString)
            and _IDEMPOTENCY_WORDS.search(node.value)
        ):
            return True
    return False


def _unless_refused(test: cst.BaseExpression) -> bool:
    """`status != 429`, alone or as one side of an `or`: true on every answer but a refusal."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return _unless_refused(test.left) or _unless_refused(test.right)
    codes = excluded_values(test)
    return bool(codes) and all(isinstance(code, cst.Integer) and code.value in REFUSED_STATUSES for code in codes)
