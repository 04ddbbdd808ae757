"""Celery tasks: the task's retry settings (`autoretry_for`, `max_retries`, `retry_backoff`,
`retry_jitter`, `default_retry_delay`, from the decorator or a base Task class), and the
`.retry()` calls a task (or a helper handed the task object) makes."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, keyword, string_value
from idemlint.analysis.policy.common import (
    handler_catches_all,
    is_catch_all,
    is_false,
    is_none,
    is_task_retry,
    is_zero,
    status_error_caught,
)
from idemlint.analysis.policy.delays import has_random
from idemlint.analysis.policy.lost_races import waits_for_another_writer
from idemlint.analysis.policy.records import Policy, Verdict
from idemlint.analysis.policy.sorting import retries_only_what_it_sorts
from idemlint.analysis.retry import ClassSetting, RetryContext, class_settings, task_keywords
from idemlint.analysis.retry.answers import names_a_state, says_failure, says_retryable, tests_a_failed_answer
from idemlint.analysis.retry.exits import always_leaves
from idemlint.analysis.retry.functions import inherited_base
from idemlint.analysis.retry.not_ready import means_not_ready
from idemlint.analysis.retry.reach import in_dead_handler
from idemlint.analysis.retry.sends import sends_a_write
from idemlint.analysis.status_errors import ProjectRaisers, hooked_module, may_raise_status_error
from idemlint.knowledge.http import HTTP_STATUS_ERRORS
from idemlint.knowledge.retries import (
    CELERY,
    CELERY_APP,
    CELERY_CALL,
    CELERY_TASK_CLASSES,
    DONE_STATES,
    NOT_READY_STATES,
)

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.summaries import Callee
else:
    cst = LazyModule("libcst", globals(), "cst")


class _Setting:
    """A Celery setting, from the decorator (`autoretry_for=...`) or a base Task class: its
    value, and the node a finding about it is reported at."""

    __slots__ = ("value", "node")

    def __init__(self, found: cst.Arg | ClassSetting) -> None:
        self.value: cst.BaseExpression = found.value
        self.node: cst.CSTNode = found if isinstance(found, cst.Arg) else found.node


def read_celery(model: ModuleModel, context: RetryContext, policy: Policy) -> None:
    label = context.label
    keywords = {name: _Setting(found) for name, found in task_keywords(model, context.config).items()}
    assert isinstance(context.node, cst.FunctionDef)
    called = [
        n
        for n in model.iter_nodes(context.node.body)
        if is_task_retry(n, model) and not in_dead_handler(model, n, context.dead_handlers)
    ]
    by_hand = [n for n in called if _retries_a_failure(model, n, context.node)]  # not a poll's `self.retry()`
    _read_settings(model, keywords, label, policy, cadence=_only_polls(model, context, called, keywords))
    if "autoretry_for" in keywords and _task_class_known(model, context.config):
        _read_autoretry_wait(model, keywords, label, policy, bool(by_hand))
    for node in by_hand:
        # a bound task's own `.retry()`: named `self.retry()` whatever the parameter is called
        countdown = keyword(node, "countdown")
        if countdown is not None and is_none(countdown.value):
            countdown = None  # `countdown=None`: Celery waits the default delay all the same
        if waits_for_another_writer(model, node):
            pass  # a row another task has not committed yet: no failing service, no herd
        elif countdown is not None and not has_random(model, countdown.value):
            policy.no_jitter.append(Verdict("fixed-wait", CELERY_CALL, countdown, label, owner="self"))
        elif countdown is None and _waits_the_default_delay(model, node, keywords, context.config):
            shaped = _backs_off(keywords) or "retry_jitter" in keywords
            kind = "default-wait-shaped" if shaped else "default-wait"
            policy.no_jitter.append(Verdict(kind, CELERY_CALL, node, label, owner="self"))
        retries = keyword(node, "max_retries")
        if retries is not None and is_none(retries.value):
            policy.unbounded.append(Verdict("no-bound", CELERY_CALL, retries, label, owner="self"))
    for handler in _retrying_handlers(model, context):
        if handler_catches_all(model, handler):
            policy.catches_all.append(Verdict("catch-all-handler", CELERY, handler, label))
        elif status_class := status_error_caught(model, handler):
            # `except HTTPError as e: raise self.retry(exc=e)` around `raise_for_status()` or
            # `urlopen()`: a 404 or a 422 is retried as a 503 is
            policy.non_retryable_statuses.append(
                Verdict("status-error-class", CELERY_CALL, handler, label, caught=status_class)
            )


def _only_polls(
    model: ModuleModel, context: RetryContext, called: list[cst.Call], keywords: dict[str, _Setting]
) -> bool:
    """A task that only polls (`if action.status == "completed": return ... else: self.retry()`)
    waits its default delay as a poll's cadence: no failure is retried, so no cohort of failed
    runs to spread. Each `self.retry()` sits in a branch of a test of a value the task read (not a
    failure: a status code, `ok`, an error), the task writes nothing but in a branch that leaves
    (storing what it waited for), hands itself to no helper
    (which may retry a failure), and no `autoretry_for` (here or on a class from elsewhere) retries."""
    task = context.node
    if not called or "autoretry_for" in keywords or not _task_class_known(model, context.config):
        return False
    calls = [n for n in model.iter_nodes(task) if isinstance(n, cst.Call)]
    if any(isinstance(a.value, cst.Name) and a.value.value == "self" for c in calls for a in c.args):
        return False
    if any(sends_a_write(model, c) and not _once_done(model, c, task) for c in calls):
        return False  # a write on the way round: not a poll
    for retry in called:
        tests = [a.test for a in model.ancestors(retry, until=task) if isinstance(a, cst.If)]
        if _retries_a_failure(model, retry, task) or any(says_failure(model, t) for t in tests):
            return False
        if not any(names_a_state(model, t, DONE_STATES, NOT_READY_STATES) for t in tests):
            return False  # no test says the work is under way or over: `if not sent:` may be a failure
    return True


def _once_done(model: ModuleModel, call: cst.Call, task: cst.CSTNode) -> bool:
    """`call` is in a branch that leaves: the poll's work once what it waited for is there."""
    return any(
        isinstance(a, (cst.IndentedBlock, cst.Else))
        and isinstance(model.parents.get(a), cst.If)
        and always_leaves(list(a.body.body if isinstance(a, cst.Else) else a.body))
        for a in model.ancestors(call, until=task)
    )


def _retries_a_failure(model: ModuleModel, call: cst.Call, task: cst.CSTNode) -> bool:
    """The `.retry()` answers a failure: it is in a handler of an error (not of "nothing there
    yet", `queue.Empty`), or under a test that the answer failed in a way worth another attempt
    (`if answer.status_code >= 500:`, `if not answer.ok:`, `if is_retryable(answer):`). Under `if
    not ready:` it polls."""
    for ancestor in model.ancestors(call):
        if ancestor is task:
            break  # what is around the task's `def` (`except ImportError:` at module level) is not its
        if isinstance(ancestor, (cst.ExceptHandler, cst.ExceptStarHandler)):
            return not means_not_ready(model, ancestor)
        if (
            isinstance(ancestor, cst.If)
            and model.is_inside(call, ancestor.body)
            and (says_retryable(model, ancestor.test) or tests_a_failed_answer(model, ancestor.test, set()))
        ):
            return True
    return False


def _waits_the_default_delay(
    model: ModuleModel, call: cst.Call, keywords: dict[str, _Setting], decorator: cst.Call | None
) -> bool:
    """`raise self.retry(exc=exc)` with no `countdown=` or `eta=`: Celery waits the task's
    `default_retry_delay` (180 s unless set), the same on every attempt. `retry_backoff` and
    `retry_jitter` shape only `autoretry_for`'s retries, so they do not help here. Not where a
    fixed `default_retry_delay` is already reported on the task, where `**options` may carry a
    countdown, where no retry is allowed (`max_retries=0`), or where a `base=` class from
    another module (or one that defines its own `retry()`) may set either."""
    eta = keyword(call, "eta")
    if eta is not None and not is_none(eta.value) or any(a.star == "**" for a in call.args):
        return False
    if "default_retry_delay" in keywords and not _backs_off(keywords):
        return False  # the setting's own finding says it
    retries = keyword(call, "max_retries") or keywords.get("max_retries")
    if retries is not None and is_zero(retries.value):
        return False
    return _task_class_known(model, decorator)


def _task_class_known(model: ModuleModel, decorator: cst.Call | None) -> bool:
    """The task's class is Celery's own Task or one this module defines on it, with no `retry()`
    of its own: what it sets (a delay, `retry_backoff`) is read here. Not where the app is made
    with a Task class of its own, nor a `base=` class from another module."""
    if _sets_its_task_class(model):
        return False  # `Celery("shop", task_cls=JitteredTask)`: every task's retry() is that class's
    base = inherited_base(decorator)
    if base is None or (model.qualname(base) or "") in CELERY_TASK_CLASSES:
        return True  # no base, or Celery's own Task, which sets no delay
    local = model.module_defs.get(base.value) if isinstance(base, cst.Name) else None
    return (
        isinstance(local, cst.ClassDef)
        and not any(isinstance(s, cst.FunctionDef) and s.name.value == "retry" for s in local.body.body)
        and all((model.qualname(b.value) or "") in CELERY_TASK_CLASSES for b in local.bases)
    )  # `class ShopTask(RetryingTask)`: what the imported class sets is not known here


def _sets_its_task_class(model: ModuleModel) -> bool:
    """The module makes its Celery app with a Task class of its own (`task_cls=`), or sets one
    (`app.Task = JitteredTask`): that class's `retry()` and delays are every task's."""
    return any(
        (model.call_name(call) or "").rsplit(".", 1)[-1] == CELERY_APP and keyword(call, "task_cls") is not None
        for call in model.calls
    ) or any(target.attr.value == "Task" for target, _, _ in model.attribute_assigns)


def read_task_class(model: ModuleModel, owner: cst.ClassDef) -> Policy | None:
    """A Celery Task class that declares retries (`autoretry_for = (Exception,)`): its
    settings are every task's that names it as `base=`, wherever those tasks live, so they
    are judged here, once, where they are written."""
    settings = class_settings(owner)
    if "autoretry_for" not in settings:
        return None
    policy = Policy.empty(None, owner)
    keywords = {name: _Setting(found) for name, found in settings.items()}
    _read_settings(model, keywords, f"Celery Task class {owner.name.value}", policy)
    return policy


def _read_settings(
    model: ModuleModel, keywords: dict[str, _Setting], label: str, policy: Policy, cadence: bool = False
) -> None:
    """What a task's settings (decorator or Task class) retry on, how they wait (not where the
    delay is a poll's `cadence`), what bounds them."""
    autoretry = keywords.get("autoretry_for")
    if autoretry is not None and is_catch_all(model, autoretry.value):
        policy.catches_all.append(Verdict("catch-all", CELERY, autoretry.node, label))
    if autoretry is not None:
        elements = autoretry.value.elements if isinstance(autoretry.value, (cst.Tuple, cst.List)) else ()
        for element in elements:
            if (named := model.qualname(element.value) or "") in HTTP_STATUS_ERRORS:
                policy.non_retryable_statuses.append(
                    Verdict("status-error-class", CELERY, element.value, label, caught=named)
                )
    max_retries = keywords.get("max_retries")
    if max_retries is not None and is_none(max_retries.value):
        policy.unbounded.append(Verdict("no-bound", CELERY, max_retries.node, label))
    jitter = keywords.get("retry_jitter")
    if _backs_off(keywords) and jitter is not None and is_false(jitter.value):
        policy.no_jitter.append(Verdict("jitter-off", CELERY, jitter.node, label))
    delay = keywords.get("default_retry_delay")
    if delay is not None and not _backs_off(keywords) and not cadence:
        policy.no_jitter.append(Verdict("fixed-wait", CELERY, delay.node, label))


def _backs_off(keywords: dict[str, _Setting]) -> bool:
    """`retry_backoff` is on (`True`, a number of seconds): autoretry computes each countdown;
    `False` or `0` written out is the default, off."""
    backoff = keywords.get("retry_backoff")
    return backoff is not None and not is_false(backoff.value) and not is_zero(backoff.value)


def _read_autoretry_wait(
    model: ModuleModel, keywords: dict[str, _Setting], label: str, policy: Policy, retries_by_hand: bool
) -> None:
    """How `autoretry_for`'s retries wait. With `retry_backoff` on, Celery computes each countdown
    (jittered unless `retry_jitter=False`, reported apart); without it, every retry waits the
    `countdown` of `retry_kwargs` (`retry_kwargs={"countdown": 5}`), else the task's
    `default_retry_delay` (180 s unless set; a set one is reported apart): the same on every
    attempt, with no random part (a decorator's arguments are computed once, when the task is
    defined). A task that also calls `self.retry()` catches what it retries itself, with its own
    countdowns (judged there): its default delay is not reported; one allowed no retry
    (`max_retries=0`) waits for nothing."""
    if _backs_off(keywords):
        return
    options = keywords.get("retry_kwargs")
    given: dict[str | None, cst.BaseExpression] = {}
    if options is not None:
        value = options.value
        if not isinstance(value, cst.Dict) or not all(isinstance(e, cst.DictElement) for e in value.elements):
            return  # built elsewhere, or `{**defaults, ...}`: its countdown is not known
        given = {string_value(e.key): e.value for e in value.elements if isinstance(e, cst.DictElement)}
    retries = given.get("max_retries") or (keywords["max_retries"].value if "max_retries" in keywords else None)
    if retries is not None and is_zero(retries):
        return  # no retry is allowed: nothing waits
    countdown = given.get("countdown")
    if countdown is not None and not is_none(countdown):
        # computed once, as the decorator runs: `random.randint(5, 30)` there is one wait for every retry
        policy.no_jitter.append(Verdict("fixed-countdown", CELERY, countdown, label))
    elif "default_retry_delay" not in keywords and "eta" not in given and not retries_by_hand:
        policy.no_jitter.append(Verdict("default-wait", CELERY, keywords["autoretry_for"].node, label))


def read_task_object_retry(model: ModuleModel, call: cst.Call, retried: set[cst.CSTNode]) -> Policy | None:
    """`task.retry(countdown=...)` in a helper handed the Celery task object (it reads
    `task.request.retries`): the same countdown check as `self.retry()` in a task."""
    func = call.func
    if not (isinstance(func, cst.Attribute) and func.attr.value == "retry" and isinstance(func.value, cst.Name)):
        return None
    scope = model.scope_of(call)
    if not isinstance(scope, cst.FunctionDef) or scope in retried:
        return None
    owner = func.value.value
    if not any(b.kind == "param" for b in model.bindings_of(scope, owner)):
        return None
    if not any(
        isinstance(n, cst.Attribute) and model.dotted(n) == f"{owner}.request.retries"
        for n in model.iter_nodes(scope.body)
    ):
        return None
    countdown = keyword(call, "countdown")
    policy = Policy.empty(None, call)
    if countdown is not None and not has_random(model, countdown.value):
        policy.no_jitter.append(Verdict("fixed-wait", CELERY_CALL, countdown, owner=owner))
    return policy


def _retrying_handlers(model: ModuleModel, context: RetryContext) -> Iterator[cst.ExceptHandler]:
    """The handlers of a Celery task that call its `.retry()` (`except Exception as exc: raise
    self.retry(exc=exc)`); not one that sorts what it caught first (`if is_transient(exc): raise
    self.retry(exc=exc)`, then `raise`), nor one no failure reaches."""
    assert isinstance(context.node, cst.FunctionDef)
    for node in model.iter_nodes(context.node.body):
        if (
            isinstance(node, cst.ExceptHandler)
            and node not in context.dead_handlers
            and not retries_only_what_it_sorts(model, node)
            and any(is_task_retry(n, model) for n in model.iter_nodes(node.body))
        ):
            yield node


def one_status_error_finding(policy: Policy) -> None:
    """A task whose `autoretry_for` names the status error class its handler retries by hand
    is reported once, at the setting (once the setting's verdict has stood the test of
    `drop_unraised_status_errors`)."""
    named = {v.caught for v in policy.non_retryable_statuses if v.kind == "status-error-class" and v.source == CELERY}
    policy.non_retryable_statuses[:] = [
        v
        for v in policy.non_retryable_statuses
        if not (v.kind == "status-error-class" and v.source == CELERY_CALL and v.caught in named)
    ]


def drop_unraised_status_errors(
    model: ModuleModel,
    context: RetryContext,
    policy: Policy,
    callee: Callable[[cst.Call], Callee | None],
    project: ProjectRaisers,
) -> None:
    """Take back the task's own `autoretry_for=(HTTPError,)` verdict where no status error can
    reach it: it raises none and calls nothing that may let one out (a download helper that
    turns every request error into its own `ImportFailure` ends it), so no 4xx is retried. A
    Task class's setting is judged where it is written, for every task that names it."""
    task, config = context.node, context.config
    if not isinstance(task, cst.FunctionDef) or config is None:
        return
    own = [
        v
        for v in policy.non_retryable_statuses
        if v.kind == "status-error-class" and any(model.is_inside(v.node, a) for a in config.args)
    ]
    if own and not hooked_module(model) and not may_raise_status_error(model, task, callee, project):
        policy.non_retryable_statuses[:] = [v for v in policy.non_retryable_statuses if v not in own]
