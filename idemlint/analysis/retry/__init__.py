"""Which code runs once per attempt: retry loops, retry decorators, retried tasks, and
callables handed to a retry helper.

Precision matters more than recall here, because every retry rule starts from this
answer (see `loops` for what makes a loop a retry loop).

- `context`: `RetryContext`, what a retry context is
- `analysis`: `RetryAnalysis`, a file's contexts and which one re-runs a node
- `functions`: retry decorators, retried tasks (Celery, Dramatiq, Huey, RQ), recursive retries
- `loops`: hand-written retry loops, retrying iterators, polling loops
- `callables`: lambdas and functions handed to a helper that calls them once per attempt
- `exits`: how a block ends (leaves the loop, falls through, goes round again)
"""

from idemlint.analysis.retry.analysis import RetryAnalysis
from idemlint.analysis.retry.context import RetryContext
from idemlint.analysis.retry.exits import always_leaves, ends_by_leaving, loop_nodes
from idemlint.analysis.retry.functions import (
    ClassSetting,
    InheritedSettings,
    class_settings,
    retried_parameter,
    task_keywords,
)
from idemlint.analysis.retry.loops import COUNTERS, SLEEPS

__all__ = [
    "COUNTERS",
    "SLEEPS",
    "ClassSetting",
    "InheritedSettings",
    "class_settings",
    "retried_parameter",
    "RetryAnalysis",
    "RetryContext",
    "always_leaves",
    "ends_by_leaving",
    "loop_nodes",
    "task_keywords",
]
