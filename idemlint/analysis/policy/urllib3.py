"""urllib3's `Retry(...)` (also through requests): the statuses and methods it retries, its
backoff, and its total. The object is a policy of its own: where it is mounted is not followed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, keyword, positional, string_value
from idemlint.analysis.policy.common import (
    NON_RETRYABLE_STATUSES,
    expr_nodes,
    is_false,
    is_none,
    is_zero,
    status_literals,
)
from idemlint.analysis.policy.records import Policy, Verdict
from idemlint.knowledge.http import NOT_IDEMPOTENT_METHODS
from idemlint.knowledge.retries import URLLIB3

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def read_urllib3_retry(model: ModuleModel, call: cst.Call) -> Policy:
    policy = Policy.empty(None, call)
    forcelist = keyword(call, "status_forcelist")
    if forcelist is not None:
        bad = status_literals(model, forcelist.value) & NON_RETRYABLE_STATUSES
        if bad:
            policy.non_retryable_statuses.append(
                Verdict("non-retryable-status", URLLIB3, call, statuses=tuple(sorted(bad)))
            )
    methods = keyword(call, "allowed_methods") or keyword(call, "method_whitelist")
    if methods is not None:
        texts = {string_value(n) for n in expr_nodes(methods.value) if isinstance(n, cst.BaseExpression)} - {None}
        unsafe = sorted(m for m in texts if m and m.upper() in NOT_IDEMPOTENT_METHODS)
        if unsafe or is_none(methods.value) or is_false(methods.value):  # None/False: every method
            policy.non_retryable_statuses.append(Verdict("unsafe-methods", URLLIB3, call, methods=tuple(unsafe)))
    factor = keyword(call, "backoff_factor")
    if factor is not None and not is_zero(factor.value) and keyword(call, "backoff_jitter") is None:
        policy.no_jitter.append(Verdict("fixed-wait", URLLIB3, call))
    total = keyword(call, "total") or positional(call, 0)
    if (
        total is not None
        and is_none(total.value)
        and not any(keyword(call, k) for k in ("connect", "read", "status", "other"))
    ):
        policy.unbounded.append(Verdict("no-bound", URLLIB3, call))
    return policy
