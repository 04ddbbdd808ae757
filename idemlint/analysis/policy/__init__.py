"""What a retry policy retries on, how it waits, and what bounds it (IDM201-203).

One `Policy` per retry context (and per urllib3 `Retry(...)` object), read from the
library's own arguments or from the shape of a hand-written loop. Each list holds verdicts:
a kind, the node to report at and the facts a message needs; none when the policy is fine
or cannot be known (unknown never becomes a finding). The rules in
`idemlint/rules/retry_policy.py` and `unbounded_retry.py` word the verdicts.

- `records`: `Policy` and `Verdict`, and the kinds each list holds
- `common`: catch-all exceptions, non-retryable statuses, literal values
- `loops`: hand-written retry loops (a polling loop is no retry context: nothing judges it)
- `tenacity`: tenacity and retrying
- `backoff`: backoff, stamina and the retry package
- `celery`: Celery task settings and `.retry()` calls
- `huey`: Huey task settings (`retries=`, `retry_delay=`)
- `urllib3`: urllib3 `Retry(...)` objects
- `recursion`: a function that calls itself again from a failure handler
- `requeue`: work put back on its queue after a failure, with a wait
- `lost_races`: policies that retry only lost races (a write conflict): not unbounded
- `delays`: whether a delay between attempts can vary (jitter)
- `fixes`: IDM202's jitter fixes and where their imports go
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.calls import tail_name
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.policy.backoff import read_backoff, read_retry_package, read_stamina
from idemlint.analysis.policy.celery import (
    drop_unraised_status_errors,
    one_status_error_finding,
    read_celery,
    read_task_class,
    read_task_object_retry,
)
from idemlint.analysis.policy.common import is_zero
from idemlint.analysis.policy.delays import SettingCall, no_setting
from idemlint.analysis.policy.delegated import drop_delegated_judgements, drop_judged_recursion
from idemlint.analysis.policy.huey import read_huey
from idemlint.analysis.policy.loops import loop_counters, read_loop
from idemlint.analysis.policy.lost_races import retries_lost_races_only
from idemlint.analysis.policy.records import Policy, Verdict
from idemlint.analysis.policy.recursion import read_recursion
from idemlint.analysis.policy.requeue import requeue_waits
from idemlint.analysis.policy.tenacity import read_retrying, read_tenacity
from idemlint.analysis.policy.urllib3 import read_urllib3_retry, retry_subclass_settings, settings_of
from idemlint.analysis.retry import RetryAnalysis, RetryContext
from idemlint.analysis.retry.functions import bound_retry_decorators, single_attempt
from idemlint.knowledge.retries import (
    BACKOFF,
    CELERY,
    HUEY,
    JITTER_SETTING,
    RETRY_PACKAGE,
    RETRYING,
    STAMINA,
    TENACITY,
    URLLIB3_RETRY,
    WAIT_SETTING,
)

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.status_errors import ProjectRaisers
    from idemlint.analysis.summaries import Callee
else:
    cst = LazyModule("libcst", globals(), "cst")

__all__ = ["Policy", "PolicyAnalysis", "Verdict"]

_Reader = Callable[[ModuleModel, RetryContext, Policy], None]
_BY_LIBRARY: dict[str, _Reader] = {
    TENACITY: read_tenacity,
    BACKOFF: read_backoff,
    STAMINA: read_stamina,
    RETRYING: read_retrying,
    RETRY_PACKAGE: read_retry_package,
    CELERY: read_celery,
    HUEY: read_huey,
}


class PolicyAnalysis:
    def __init__(
        self,
        model: ModuleModel,
        retry: RetryAnalysis,
        callee: Callable[[cst.Call], Callee | None] | None = None,
        raisers: ProjectRaisers | None = None,
        retry_class: Callable[[cst.Call], frozenset[str] | None] | None = None,
    ) -> None:
        """`raisers`: what the project index knows of the functions that may let an HTTP status
        error out (`raises_status_error`), or None where no index was built; `retry_class`: for
        a call that builds one of the project's subclasses of urllib3's `Retry`, the methods
        that class defines (None for any other call)."""
        self.model = model
        self.callee = callee
        self.raisers = raisers
        self.setting = _settings_through(callee)
        self.policies: list[Policy] = []
        read: set[cst.Call] = set()
        for context in retry.contexts:
            if context.config is not None and context.kind == "callable" and context.config in read:
                continue  # one `Retrying(...)` object handed several functions: its settings are read once
            if context.config is not None:
                read.add(context.config)
            policy = self._policy(context)
            if policy is not None:
                if context.kind == "loop" and callee is not None:
                    _waits_in_helpers(model, context, policy, callee, self.setting)
                self.policies.append(policy)
        for context in bound_retry_decorators(model, {c.config for c in retry.contexts if c.config is not None}):
            bound = self._policy(context)
            if bound is not None:
                self.policies.append(bound)
        for call in model.calls:
            built = _built_without_jitter(model, call, callee) if callee is not None else None
            if built is not None:
                self.policies.append(Policy(None, call, [], [], [built], []))
            if model.call_name(call) in URLLIB3_RETRY:
                self.policies.append(read_urllib3_retry(model, call))
            elif (subclassed := retry_subclass_settings(model, call)) is not None:
                self.policies.append(read_urllib3_retry(model, call, subclassed))
            elif retry_class is not None and (methods := retry_class(call)) is not None and "__init__" not in methods:
                # a subclass whose `__init__` sets its own settings is read where it calls `super().__init__`
                self.policies.append(read_urllib3_retry(model, call, settings_of(call, methods)))
        for verdict in requeue_waits(model, self.setting):
            self.policies.append(Policy(None, verdict.node, [], [], [verdict], []))
        retried = {c.node for c in retry.contexts}
        for call in model.calls:
            policy = read_task_object_retry(model, call, retried)
            if policy is not None:
                self.policies.append(policy)
        used_as_base = {
            arg.value.value
            for context in retry.contexts
            if context.library == CELERY and context.config is not None
            for arg in context.config.args
            if arg.keyword is not None and arg.keyword.value == "base" and isinstance(arg.value, cst.Name)
        }
        for owner in model.classes:
            if owner.name.value not in used_as_base and model.scope_of(owner) is model.module:
                policy = read_task_class(model, owner)  # read with its tasks when they are here
                if policy is not None:
                    self.policies.append(policy)

    def _policy(self, context: RetryContext) -> Policy | None:
        call = context.config
        if context.settings_elsewhere:
            return None  # a decorator bound in another module: judged where it is written
        if call is not None and (any(a.star == "**" for a in call.args) or single_attempt(self.model, call)):
            return None  # settings we cannot see, or a "retry" that never retries
        if context.kind == "poll":
            # a poll (a loop, or `@retry` on a function that raises until an order is issued) re-reads an
            # answer: no retry rule judges it, not its fixed interval nor its bound (judged on unseen
            # repositories, 22 of 23 unbounded polls were not bugs)
            return None
        policy = Policy.empty(context, context.anchor)
        reader = _BY_LIBRARY.get(context.library)
        if context.kind == "loop":
            read_loop(self.model, context, policy, self.setting)
            loop = context.node
            if self.callee is not None and isinstance(loop, (cst.For, cst.While)):
                drop_delegated_judgements(self.model, loop, policy, self.callee, loop_counters(self.model, loop))
        elif context.kind == "recursive":
            read_recursion(self.model, context, policy, self.setting)
            if self.callee is not None:
                drop_judged_recursion(self.model, policy, self.callee)
        elif reader is not None:
            reader(self.model, context, policy)
            if context.library == CELERY and self.callee is not None and self.raisers is not None:
                drop_unraised_status_errors(self.model, context, policy, self.callee, self.raisers)
            if context.library == CELERY:
                one_status_error_finding(policy)
        if policy.unbounded and retries_lost_races_only(self.model, context, self.callee):
            policy.unbounded.clear()  # each retry follows another writer's commit: the retries end
        return policy


def _settings_through(callee: Callable[[cst.Call], Callee | None] | None) -> SettingCall:
    """Whether a call returns a setting, as the summary of the function it runs says."""
    if callee is None:
        return no_setting

    def setting(call: cst.Call) -> bool:
        found = callee(call)
        return found is not None and found.summary.returns_setting is not None

    return setting


def _built_without_jitter(
    model: ModuleModel, call: cst.Call, callee: Callable[[cst.Call], Callee | None]
) -> Verdict | None:
    """`HttpxRetry(max_retries=4, backoff_factor=0.5)`: a project class whose constructor takes a
    wait and a jitter that defaults to none, built with a wait and without the jitter."""
    if not tail_name(call.func)[:1].isupper() or any(a.star for a in call.args):
        return None
    if not any(
        a.keyword is not None
        and WAIT_SETTING.search(a.keyword.value)
        and not JITTER_SETTING.search(a.keyword.value)
        and not is_zero(a.value)
        for a in call.args
    ):
        return None
    found = callee(call)
    if found is None or found.summary.opt_in_jitter is None:
        return None
    jitter = found.summary.opt_in_jitter[-1].text
    positional = sum(1 for a in call.args if a.keyword is None)
    params = found.summary.params
    if any(a.keyword is not None and a.keyword.value == jitter for a in call.args) or (
        jitter in params and params.index(jitter) < positional
    ):
        return None
    return Verdict("fixed-wait", "retry-class", call, owner=found.name, setting=jitter)


def _waits_in_helpers(
    model: ModuleModel,
    context: RetryContext,
    policy: Policy,
    callee: Callable[[cst.Call], Callee | None],
    setting: SettingCall,
) -> None:
    """A retry loop that waits through a helper (`sleep(500)`, `backoff.handle_retry()`) whose
    summary says it sleeps a delay with no random part. The attempt itself (a call in a `try`
    body) may pace its own requests: only calls between attempts count, and none in a loop
    that already waits with a random delay of its own."""
    from idemlint.analysis.policy.delays import deterministic_delay
    from idemlint.analysis.retry import SLEEPS, loop_nodes
    from idemlint.analysis.summary_records import fixed_argument, passed_arguments

    loop = context.node
    assert isinstance(loop, (cst.For, cst.While))
    nodes = loop_nodes(model, loop)
    if any(
        isinstance(n, cst.Call)
        and model.call_name(n) in SLEEPS
        and n.args
        and not deterministic_delay(model, n.args[0].value, setting)
        for n in nodes
    ):
        return
    for node in nodes:
        if not isinstance(node, cst.Call) or model.call_name(node) in SLEEPS or _in_attempt(model, node, loop):
            continue
        found = callee(node)
        fixed = fixed_argument(model, node, setting)
        chain = found.summary.fixed_wait_for(passed_arguments(node), fixed) if found else None
        if found is not None and chain:
            policy.no_jitter.append(
                Verdict("fixed-wait", "helper", node, context.label, owner=found.name, callee=found, chain=chain)
            )


def _in_attempt(model: ModuleModel, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """Inside the body of a `try` of the loop: part of the attempt, not the wait after it."""
    child = node
    for ancestor in model.ancestors(node):
        if ancestor is loop:
            return False
        if isinstance(ancestor, (cst.Try, cst.TryStar)) and child is ancestor.body:
            return True
        child = ancestor
    return False
