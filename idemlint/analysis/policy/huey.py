"""Huey tasks: `@huey.task(retries=3, retry_delay=60)` runs the task again on any exception that
leaves it (Huey takes no list of what to retry) after `retry_delay`, the same every time unless
`retry_backoff` multiplies it (Huey 3.3), and never with a random part."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, keyword
from idemlint.analysis.policy.common import handler_catches_all, is_zero
from idemlint.analysis.policy.records import Policy, Verdict
from idemlint.analysis.retry import RetryContext
from idemlint.knowledge.retries import HUEY

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def read_huey(model: ModuleModel, context: RetryContext, policy: Policy) -> None:
    """Every exception the task lets out is retried (IDM201, at `retries=`), unless its body ends
    every one it did not sort as transient (`except Exception: return`); a nonzero `retry_delay`
    is a wait with no random part (IDM202)."""
    config, task = context.config, context.node
    retries = keyword(config, "retries") if config is not None else None
    if config is None or retries is None or is_zero(retries.value) or not isinstance(task, cst.FunctionDef):
        return  # a task's context always has its decorator call; `retries=0.0` ends it too
    if not _is_huey(model, config):
        return  # Airflow's or Prefect's `@task(retries=3)`: retried, but by their own rules
    if not _ends_what_it_did_not_sort(model, task):
        policy.catches_all.append(Verdict("catch-all", HUEY, retries, context.label))
    delay = keyword(config, "retry_delay")
    if delay is not None and not is_zero(delay.value):
        policy.no_jitter.append(Verdict("fixed-wait", HUEY, delay, context.label))


def _is_huey(model: ModuleModel, decorator: cst.Call) -> bool:
    """The decorator is Huey's: imported from it (`from huey.contrib.djhuey import task`), or a
    method of a Huey instance the module makes (`huey = RedisHuey("app")`, then `@huey.task(...)`)."""
    if HUEY in (model.qualname(decorator.func) or "").lower():
        return True
    func = decorator.func
    if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
        return False
    bound = model.bindings_of(model.module, func.value.value)
    return any(isinstance(b.value, cst.Call) and HUEY in (model.qualname(b.value.func) or "").lower() for b in bound)


def _ends_what_it_did_not_sort(model: ModuleModel, task: cst.FunctionDef) -> bool:
    """The task's body ends in one `try` whose handler of every exception raises nothing, and
    what comes before it, its `else` and its `finally` call nothing: only what an earlier,
    narrower handler lets out reaches Huey's retry. A `try` around a first step only (`try:
    cache.delete(k) except Exception: log`) does not cover the request after it."""
    body = list(task.body.body)
    last = body[-1] if body else None
    outside = [*body[:-1], *([last.orelse, last.finalbody] if isinstance(last, cst.Try) else [])]
    return (
        isinstance(last, cst.Try)
        and not any(isinstance(n, cst.Call) for s in outside if s is not None for n in (s, *model.iter_nodes(s)))
        and any(
            handler_catches_all(model, handler)
            and not any(isinstance(n, cst.Raise) for n in model.iter_nodes(handler.body))
            for handler in last.handlers
        )
    )
