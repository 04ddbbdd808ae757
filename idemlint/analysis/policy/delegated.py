"""Retry handlers that hand what they caught to a function of the project that judges it.

`except Exception as exc: next_sleep = _on_error(exc, deadline, predicate)`: where `_on_error`
may raise (its summary's `gives_up`), the handler goes round only when it returns. It decides
which errors are retried, so the handler does not retry every exception (IDM201); where it is
also handed a bound (a deadline, an attempt count), it owns the loop's bound (IDM203), as a
test on the loop's counter would."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.policy.common import expr_nodes
from idemlint.analysis.policy.loops import BOUND_WORDS
from idemlint.analysis.retry.exits import loop_nodes

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.policy.records import Policy
    from idemlint.analysis.summaries import Callee
else:
    cst = LazyModule("libcst", globals(), "cst")


def drop_delegated_judgements(
    model: ModuleModel, loop: cst.For | cst.While, policy: Policy, callee: Callable[[cst.Call], Callee | None]
) -> None:
    """Take back the catch-all and no-bound verdicts that a judging helper answers."""
    judged: dict[cst.CSTNode, cst.Call] = {}
    for handler in loop_nodes(model, loop):
        if not isinstance(handler, cst.ExceptHandler) or handler.name is None:
            continue
        caught = handler.name.name
        if not isinstance(caught, cst.Name):
            continue
        for node in model.iter_nodes(handler.body):
            if isinstance(node, cst.Call) and any(
                isinstance(a.value, cst.Name) and a.value.value == caught.value for a in node.args
            ):
                found = callee(node)
                if found is not None and found.summary.gives_up is not None:
                    judged[handler] = node
                    break
    if not judged:
        return
    policy.catches_all[:] = [v for v in policy.catches_all if v.node not in judged]
    if any(_hands_a_bound(model, call) for call in judged.values()):
        policy.unbounded[:] = [v for v in policy.unbounded if v.kind != "no-bound"]


def _hands_a_bound(model: ModuleModel, call: cst.Call) -> bool:
    """`_on_error(exc, deadline, ...)`, `judge(err, attempts=n, max_attempts=m)`."""
    return any(
        isinstance(n, (cst.Name, cst.Attribute)) and BOUND_WORDS.search(model.dotted(n) or "")
        for arg in call.args
        for n in expr_nodes(arg.value)
    ) or any(arg.keyword is not None and BOUND_WORDS.search(arg.keyword.value) for arg in call.args)
