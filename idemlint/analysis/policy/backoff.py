"""backoff (`on_exception`, `on_predicate`), stamina (`retry`, `retry_context`) and the
`retry` package: decorators bounded by counts and times, jittered unless told not to."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, keyword, positional
from idemlint.analysis.policy.common import is_catch_all, is_none, is_zero, statuses_in
from idemlint.analysis.policy.fixes import drop_jitter_none
from idemlint.analysis.policy.records import Policy, Verdict
from idemlint.analysis.retry import RetryContext
from idemlint.knowledge.retries import BACKOFF, STAMINA

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def read_backoff(model: ModuleModel, context: RetryContext, policy: Policy) -> None:
    call = context.config
    if call is None:
        return
    label, anchor = context.label, context.anchor
    name = model.call_name(call) or ""
    if name.endswith("on_exception"):
        exceptions = keyword(call, "exception") or positional(call, 1)
        if exceptions is not None and is_catch_all(model, exceptions.value) and keyword(call, "giveup") is None:
            policy.catches_all.append(Verdict("catch-all", BACKOFF, exceptions, label))
    else:
        predicate = keyword(call, "predicate") or positional(call, 1)
        statuses = statuses_in(predicate.value) if predicate is not None else ()
        if statuses:
            policy.non_retryable_statuses.append(
                Verdict("non-retryable-status", BACKOFF, anchor, label, statuses=statuses)
            )
    jitter = keyword(call, "jitter")
    if jitter is not None and isinstance(jitter.value, cst.Name) and jitter.value.value == "None":
        policy.no_jitter.append(Verdict("jitter-off", BACKOFF, jitter, label, fix=drop_jitter_none(jitter)))
    if keyword(call, "max_tries") is None and keyword(call, "max_time") is None:
        policy.unbounded.append(Verdict("no-bound", BACKOFF, anchor, label))


def read_stamina(model: ModuleModel, context: RetryContext, policy: Policy) -> None:
    call = context.config
    if call is None:
        return
    label = context.label
    on = keyword(call, "on")
    if on is not None and is_catch_all(model, on.value):
        policy.catches_all.append(Verdict("catch-all", STAMINA, on, label))
    attempts, timeout = keyword(call, "attempts"), keyword(call, "timeout")
    if attempts is not None and timeout is not None and is_none(attempts.value) and is_none(timeout.value):
        policy.unbounded.append(Verdict("no-bound", STAMINA, context.anchor, label))
    jitter = keyword(call, "wait_jitter")
    if jitter is not None and is_zero(jitter.value):
        policy.no_jitter.append(Verdict("jitter-off", STAMINA, jitter, label))


def read_retry_package(model: ModuleModel, context: RetryContext, policy: Policy) -> None:
    """The `retry` package: `@retry(exceptions=Exception, tries=-1, delay=0, jitter=0)` by default."""
    call = context.config
    label, anchor = context.label, context.anchor
    exceptions = (keyword(call, "exceptions") or positional(call, 0)) if call else None
    if exceptions is None:
        policy.catches_all.append(Verdict("no-filter", "retry", anchor, label))
    elif is_catch_all(model, exceptions.value):
        policy.catches_all.append(Verdict("catch-all", "retry", exceptions, label))
    tries = (keyword(call, "tries") or positional(call, 1)) if call else None
    if tries is None or isinstance(tries.value, cst.UnaryOperation):
        policy.unbounded.append(Verdict("no-bound", "retry", tries or anchor, label))
    jitter = keyword(call, "jitter") if call else None
    if jitter is None or is_zero(jitter.value):
        policy.no_jitter.append(Verdict("fixed-wait", "retry", jitter or anchor, label))
