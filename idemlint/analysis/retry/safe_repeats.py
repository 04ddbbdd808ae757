"""Retry loops whose repeats cannot do the work twice: each follows an attempt the server
turned away (a 429), or the code goes round only for work it deems idempotent. The loop is
still a retry (its policy is judged); what it repeats is not a duplicate (IDM001, IDM301)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.retry.exits import (
    always_leaves,
    ends_with_continue,
    goes_round_on_failure,
    guarded_continue,
    loop_nodes,
)
from idemlint.knowledge.http import REFUSED_STATUSES

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
    if any(isinstance(n, (cst.Try, cst.TryStar)) and goes_round_on_failure(model, n) for n in nodes):
        return False
    return any(
        isinstance(statement, cst.If) and always_leaves(list(statement.body.body)) and _unless_refused(statement.test)
        for statement in loop.body.body
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
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    target = test.comparisons[0]
    if isinstance(target.operator, cst.NotEqual):
        codes = [target.comparator]
    elif isinstance(target.operator, cst.NotIn) and isinstance(target.comparator, (cst.Tuple, cst.List, cst.Set)):
        codes = [element.value for element in target.comparator.elements]
    else:
        return False
    return all(isinstance(code, cst.Integer) and code.value in REFUSED_STATUSES for code in codes)
