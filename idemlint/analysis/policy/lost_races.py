"""Retries of a lost race: a policy that goes round only on errors that say another writer won
(`LOST_RACE_ERRORS`: a write conflict, a serialization failure, a deadlock). Each such error
means some transaction committed, so the retries end as the competition does; an attempt
limit would turn a busy moment into a failure. IDM203 leaves them alone, and IDM202 a fixed
wait for another writer of the project's database (`waits_for_another_writer`).

What a policy retries on is read from the library's own argument (tenacity's `retry=`,
`retrying`'s `retry_on_exception=` predicate, backoff's exception), or, for a hand-written loop,
from the handlers that send it round. A predicate function (`def retry_on_conflict(exc):
return isinstance(exc, WriteConflictError)`), here or in another module, has the summary fact
`lost_race_test`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import keyword
from idemlint.analysis.policy.common import handler_around
from idemlint.analysis.retry.exits import always_leaves, loop_nodes
from idemlint.knowledge.retries import ANOTHER_WRITER_ERRORS, BACKOFF, LOST_RACE_ERRORS, RETRYING, TENACITY

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.retry import RetryContext
    from idemlint.analysis.summaries import Callee
else:
    cst = LazyModule("libcst", globals(), "cst")

CalleeOf = Callable[["cst.Call"], "Callee | None"]


def names_lost_races(model: ModuleModel, expr: cst.BaseExpression | None, also: re.Pattern[str] | None = None) -> bool:
    """An exception class, or a tuple of them, every one of which says a race was lost (or is
    named as `also` says)."""
    if expr is None:
        return False
    if isinstance(expr, (cst.Tuple, cst.List)):
        return bool(expr.elements) and all(names_lost_races(model, e.value, also) for e in expr.elements)
    name = (model.dotted(expr) or "").rsplit(".", 1)[-1]
    return bool(name) and bool(LOST_RACE_ERRORS.search(name) or also is not None and also.search(name))


def tests_lost_race(model: ModuleModel, function: cst.FunctionDef) -> bool:
    """`def retry_on_conflict(exc): return isinstance(exc, WriteConflictError)`: every return
    gives such a test of the first parameter (or a name assigned only from one)."""
    params = function.params.params
    if not params:
        return False
    first = params[1] if params[0].name.value in ("self", "cls") and len(params) > 1 else params[0]
    returns = model.returns.get(function, [])
    return bool(returns) and all(
        r.value is not None and _is_lost_race_test(model, r.value, first.name.value) for r in returns
    )


def _is_lost_race_test(model: ModuleModel, expr: cst.BaseExpression, param: str) -> bool:
    if isinstance(expr, cst.Name):
        value = model.sole_value(expr)
        return value is not None and value is not expr and _is_lost_race_test(model, value, param)
    if not (isinstance(expr, cst.Call) and model.dotted(expr.func) == "isinstance" and len(expr.args) == 2):
        return False
    tested = expr.args[0].value
    return isinstance(tested, cst.Name) and tested.value == param and names_lost_races(model, expr.args[1].value)


def retries_lost_races_only(model: ModuleModel, context: RetryContext, callee: CalleeOf | None) -> bool:
    """Whether the retry context goes round only on lost races."""
    call = context.config
    if context.kind == "loop":
        return _loop_retries_lost_races(model, context.node)
    if call is None:
        return False
    if context.library == TENACITY:
        retry = keyword(call, "retry")
        test = retry.value if retry is not None else None
        return (
            isinstance(test, cst.Call)
            and (model.call_name(test) or "").endswith("retry_if_exception_type")
            and bool(test.args)
            and all(names_lost_races(model, a.value) for a in test.args)
        )
    if context.library == RETRYING:
        predicate = keyword(call, "retry_on_exception")
        return predicate is not None and _is_lost_race_predicate(model, predicate.value, callee)
    if context.library == BACKOFF:
        positional = [a for a in call.args if a.keyword is None]
        return len(positional) >= 2 and names_lost_races(model, positional[1].value)
    return False


def _is_lost_race_predicate(model: ModuleModel, reference: cst.BaseExpression, callee: CalleeOf | None) -> bool:
    """A reference to a function (here or, through the index, elsewhere) that tests for a lost race."""
    if callee is None or not isinstance(reference, (cst.Name, cst.Attribute)):
        return False
    found = callee(cst.Call(func=reference))
    return found is not None and found.summary.lost_race_test is not None


def _loop_retries_lost_races(model: ModuleModel, loop: cst.CSTNode) -> bool:
    """Every handler of the loop that sends it round catches lost races only, and nothing else
    sends it round (no `continue` outside those handlers)."""
    if not isinstance(loop, (cst.For, cst.While)):
        return False
    nodes = loop_nodes(model, loop)
    going_round = [n for n in nodes if isinstance(n, cst.ExceptHandler) and not always_leaves(list(n.body.body))]
    if not going_round or not all(names_lost_races(model, h.type) for h in going_round):
        return False
    return not any(isinstance(n, cst.Continue) and not any(model.is_inside(n, h) for h in going_round) for n in nodes)


def waits_for_another_writer(model: ModuleModel, wait: cst.Call, loop: cst.CSTNode | None = None) -> bool:
    """The wait (a sleep in `loop`, or a task's `self.retry()`) is in a handler that catches
    only what another writer of the project's own data causes: a lost race, a duplicate insert
    (`IntegrityError`), a row another task has not created yet (`Docket.DoesNotExist`). Nothing
    is failing: the retry waits for that writer to commit, and no herd comes back to a
    recovering service (IDM202 leaves its fixed wait alone; its bound is judged as before)."""
    handler = handler_around(model, wait)
    return (
        handler is not None
        and (loop is None or model.is_inside(handler, loop))
        and names_lost_races(model, handler.type, ANOTHER_WRITER_ERRORS)
    )
