"""A retry by putting the work back on the queue: what a task queue (or a project's own job
runner) does when a task fails and has retries left.

The function counts an attempt on the unit of work (`task.retries -= 1`, `job.attempts += 1`),
sets when it may run again (`task.eta = now + delay`, or `eta=` / `countdown=` on the call)
and hands the same object back to the queue (`self.add_schedule(task)`, `queue.enqueue(job)`).
Its wait between attempts is judged like any other: one built only from settings and
arithmetic (`timedelta(seconds=task.retry_delay)`, grown by `*= task.retry_backoff`) has no
random part, so every task that failed together is retried together.

A periodic job put back on its schedule counts no attempt, and is not a retry.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.calls import tail_name
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.policy.delays import RANDOMISH, SettingCall, deterministic_delay, no_setting
from idemlint.analysis.policy.records import Verdict
from idemlint.knowledge.retries import REQUEUE, is_attempt_counter

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")

# a call that puts work on a queue or schedule: `enqueue`, `requeue`, `add_schedule`, `put`
_QUEUES = re.compile(r"^(en|re)queue|schedule|^(put|push|submit)(_|$)")
# where work says when it may run next, as an attribute or a keyword of the queueing call
_WHEN = frozenset({"eta", "countdown", "run_at", "scheduled_at", "not_before", "execute_at", "delay"})
_TIMEDELTA = frozenset({"datetime.timedelta", "timedelta"})


def requeue_waits(model: ModuleModel, setting: SettingCall = no_setting) -> Iterator[Verdict]:
    """One verdict per function that retries work by requeueing it after a wait with no
    random part, reported at the wait."""
    for function in model.functions:
        counted = _counted_work(model, function)
        if not counted:
            continue
        queued = [c for c in _queue_calls(model, function) if _hands_over(c, counted)]
        if not queued:
            continue
        for wait in _waits(model, function, counted, queued):
            # a `timedelta(seconds=...)` is judged by its arguments
            spans = isinstance(wait, cst.Call) and model.call_name(wait) in _TIMEDELTA
            parts = [a.value for a in wait.args] if isinstance(wait, cst.Call) and spans else [wait]
            if parts and all(deterministic_delay(model, part, setting) for part in parts):
                yield Verdict("fixed-wait", REQUEUE, wait, owner=sorted(counted)[0])
                break


def _counted_work(model: ModuleModel, function: cst.FunctionDef) -> set[str]:
    """The objects whose attempts the function counts: `task` in `task.retries -= 1`."""
    names = set()
    for node in model.iter_nodes(function.body):
        if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Attribute):
            owner = node.target.value
            if isinstance(owner, cst.Name) and is_attempt_counter(node.target.attr.value):
                names.add(owner.value)
    return names


def _queue_calls(model: ModuleModel, function: cst.FunctionDef) -> Iterator[cst.Call]:
    for node in model.iter_nodes(function.body):
        if isinstance(node, cst.Call) and _QUEUES.search(tail_name(node.func)):
            yield node


def _hands_over(call: cst.Call, counted: set[str]) -> bool:
    return any(a.keyword is None and isinstance(a.value, cst.Name) and a.value.value in counted for a in call.args)


def _waits(
    model: ModuleModel, function: cst.FunctionDef, counted: set[str], queued: list[cst.Call]
) -> Iterator[cst.BaseExpression]:
    """The delays the work is given: a `timedelta(...)` in the time it is set to run at, or
    the number given as its countdown or delay."""
    whens: list[cst.BaseExpression] = [
        a.value for call in queued for a in call.args if a.keyword is not None and a.keyword.value in _WHEN
    ]
    for node in model.iter_nodes(function.body):
        if isinstance(node, cst.Assign) and any(
            isinstance(t.target, cst.Attribute)
            and isinstance(t.target.value, cst.Name)
            and t.target.value.value in counted
            and t.target.attr.value in _WHEN
            for t in node.targets
        ):
            whens.append(node.value)
    for when in whens:
        if any(
            isinstance(n, cst.Call) and RANDOMISH.search(model.call_name(n) or "") for n in origin_nodes(model, when)
        ):
            continue  # `now + timedelta(seconds=delay) + timedelta(seconds=random.uniform(0, 5))`
        spans = [n for n in origin_nodes(model, when) if isinstance(n, cst.Call) and model.call_name(n) in _TIMEDELTA]
        if spans:
            yield from spans
        elif not _is_clock_sum(when):
            yield when  # `countdown=60`, `delay=task.retry_delay`


def _is_clock_sum(when: cst.BaseExpression) -> bool:
    """`now + delay`: a point in time, whose wait is the part a `timedelta` gives (or unknown)."""
    return isinstance(when, cst.BinaryOperation)
