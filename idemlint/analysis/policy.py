"""What a retry policy retries on, how it waits, and what bounds it.

One `Policy` per retry context (and per urllib3 `Retry(...)` object), read from the
library's own arguments: tenacity, backoff, stamina, retrying, retry, Celery, urllib3,
or from the shape of a hand-written loop. Each field is a verdict plus the node to report
at, or None when the policy is fine or cannot be known: unknown never becomes a finding.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.keys import CLOCK_CALLS
from idemlint.analysis.model import (
    ModuleModel,
    iter_nodes,
    keyword,
    positional,
    string_value,
)
from idemlint.analysis.retry import (
    SLEEPS,
    ClassSetting,
    RetryAnalysis,
    RetryContext,
    _loop_nodes,
    always_leaves,
    task_keywords,
)

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.rule import FixPlan, NodeEdit
else:
    cst = LazyModule("libcst", globals(), "cst")
    from idemlint.rule import FixPlan, NodeEdit

CATCH_ALL = {"Exception", "BaseException", "builtins.Exception", "builtins.BaseException"}
NON_RETRYABLE_STATUSES = {400, 401, 403, 404, 405, 410, 422}
RANDOM_WAITS = {
    "tenacity.wait_random",
    "tenacity.wait_random_exponential",
    "tenacity.wait_exponential_jitter",
    "tenacity.wait_full_jitter",
    "tenacity.wait.wait_random",
    "tenacity.wait.wait_random_exponential",
    "tenacity.wait.wait_exponential_jitter",
}
FIXED_WAITS = {
    "tenacity.wait_fixed",
    "tenacity.wait_exponential",
    "tenacity.wait_incrementing",
    "tenacity.wait_chain",
    "tenacity.wait_none",
    "tenacity.wait_combine",
}
UNBOUNDED_STOPS = {"tenacity.stop_never"}
URLLIB3_RETRY = {
    "urllib3.Retry",
    "urllib3.util.Retry",
    "urllib3.util.retry.Retry",
    "requests.adapters.Retry",
    "requests.packages.urllib3.util.retry.Retry",
    "requests.packages.urllib3.Retry",
}
_MATH = {
    "min",
    "max",
    "pow",
    "len",
    "int",
    "float",
    "round",
    "abs",
    "math.pow",
    "math.exp",
    "math.floor",
    "math.ceil",
    "range",
}
_RANDOMISH = re.compile(r"random|jitter|uniform|randint|randrange|token|urandom|choice|gauss", re.IGNORECASE)
_NETWORK_ERRORS = re.compile(
    r"Connection|Timeout|requests\.|httpx\.|urllib3\.|aiohttp\.|socket\.|HTTP|Transport|Network|ProtocolError|RemoteDisconnected|OperationalError"
)
_STATUS_ERRORS = {"requests.HTTPError", "requests.exceptions.HTTPError", "httpx.HTTPStatusError"}
_BOUND_WORDS = re.compile(r"timeout|deadline|give_?up|expired|max_(attempts|tries|retries)|start_time", re.I)
_ATTEMPTS = re.compile(r"retries|attempt|tries", re.IGNORECASE)
_SERVER_DELAY = re.compile(r"retry.?after|reset|ratelimit", re.IGNORECASE)


@dataclass(frozen=True)
class Verdict:
    node: cst.CSTNode
    message: str
    fix: FixPlan | None = None


class _Setting:
    """A Celery setting, from the decorator (`autoretry_for=...`) or a base Task class: its
    value, and the node a finding about it is reported at."""

    __slots__ = ("value", "node")

    def __init__(self, found: cst.Arg | ClassSetting) -> None:
        self.value: cst.BaseExpression = found.value
        self.node: cst.CSTNode = found if isinstance(found, cst.Arg) else found.node


@dataclass
class Policy:
    context: RetryContext | None  # None for a urllib3 Retry object
    anchor: cst.CSTNode
    catches_all: list[Verdict]
    non_retryable_statuses: list[Verdict]
    no_jitter: list[Verdict]
    unbounded: list[Verdict]


class PolicyAnalysis:
    def __init__(self, model: ModuleModel, retry: RetryAnalysis) -> None:
        self.model = model
        self.policies: list[Policy] = []
        for context in retry.contexts:
            policy = self._policy(context)
            if policy is not None:
                self.policies.append(policy)
        for call in model.calls:
            if model.call_name(call) in URLLIB3_RETRY:
                self.policies.append(self._urllib3(call))
        retried = {c.node for c in retry.contexts}
        for call in model.calls:
            policy = self._task_object_retry(call, retried)
            if policy is not None:
                self.policies.append(policy)

    def _policy(self, context: RetryContext) -> Policy | None:
        call = context.config
        if call is not None and (any(a.star == "**" for a in call.args) or self._single_attempt(call)):
            return None  # settings we cannot see, or a "retry" that never retries
        policy = Policy(context, context.anchor, [], [], [], [])
        if context.kind == "loop":
            self._loop(context, policy)
        elif context.kind == "poll":
            loop = context.node
            assert isinstance(loop, cst.While)
            nodes = _loop_nodes(loop)
            if not self._poll_bounded(loop, nodes):
                policy.unbounded.append(Verdict(loop, "the polling loop has no attempt limit and no deadline"))
        elif context.library == "tenacity":
            self._tenacity(context, policy)
        elif context.library == "backoff":
            self._backoff(context, policy)
        elif context.library == "stamina":
            self._stamina(context, policy)
        elif context.library == "retrying":
            self._retrying(context, policy)
        elif context.library == "retry":
            self._retry_package(context, policy)
        elif context.library == "celery":
            self._celery(context, policy)
        return policy

    def _single_attempt(self, call: cst.Call) -> bool:
        """`stop=stop_after_attempt(1)`, `max_tries=1`, `attempts=1`: one try, no retry."""
        for arg in call.args:
            value = arg.value
            if arg.keyword is not None and arg.keyword.value in (
                "max_tries",
                "attempts",
                "tries",
                "stop_max_attempt_number",
            ):
                if isinstance(value, cst.Integer) and value.value == "1":
                    return True
            if arg.keyword is not None and arg.keyword.value == "stop":
                # `stop=stop_after_attempt(1)`, directly or through a constant (`stop=_NO_RETRY`)
                stops = [n for n in origin_nodes(self.model, value) if isinstance(n, cst.Call)]
                if len(stops) == 1 and (self.model.call_name(stops[0]) or "").endswith("stop_after_attempt"):
                    first = stops[0].args[0].value if stops[0].args else None
                    return isinstance(first, cst.Integer) and first.value == "1"
        return False

    # -- libraries ----------------------------------------------------------------------

    def _tenacity(self, context: RetryContext, policy: Policy) -> None:
        call = context.config
        label = context.label
        retry_arg = keyword(call, "retry") if call else None
        if retry_arg is None:
            policy.catches_all.append(
                Verdict(context.anchor, f"{label} has no retry= condition, so it retries every exception")
            )
        else:
            caught = self._tenacity_catches_all(retry_arg.value)
            if caught is not None:
                policy.catches_all.append(Verdict(context.anchor, f"{label} retries {caught}"))
            statuses = self._statuses_in(retry_arg.value)
            if statuses:
                policy.non_retryable_statuses.append(
                    Verdict(context.anchor, f"{label} retries on HTTP {_codes(statuses)}, which a retry cannot fix")
                )
        stop_arg = keyword(call, "stop") if call else None
        if stop_arg is None:
            policy.unbounded.append(Verdict(context.anchor, f"{label} has no stop=, so it retries forever"))
        elif any(
            self.model.qualname(n) in UNBOUNDED_STOPS
            for n in _expr_nodes(stop_arg.value)
            if isinstance(n, (cst.Name, cst.Attribute))
        ):
            policy.unbounded.append(Verdict(stop_arg, f"{label} uses stop_never"))
        wait_arg = keyword(call, "wait") if call else None
        if wait_arg is None:
            policy.no_jitter.append(
                Verdict(context.anchor, f"{label} has no wait=, so every client retries at once, immediately")
            )
        elif not self._tenacity_jitters(wait_arg.value):
            policy.no_jitter.append(
                Verdict(wait_arg, f"{label} waits with no random component", self._jitter_tenacity_wait(wait_arg.value))
            )

    def _tenacity_catches_all(self, expr: cst.BaseExpression) -> str | None:
        """`retry_if_exception_type(Exception)`, or a `|` / `retry_any` with such a part."""
        if isinstance(expr, cst.BinaryOperation):
            if isinstance(expr.operator, cst.BitOr):
                return self._tenacity_catches_all(expr.left) or self._tenacity_catches_all(expr.right)
            return None  # `&` narrows
        if not isinstance(expr, cst.Call):
            return None
        name = self.model.call_name(expr) or ""
        if name.endswith("retry_any"):
            return next((found for a in expr.args if (found := self._tenacity_catches_all(a.value))), None)
        if name.endswith(("retry_if_exception_type", "retry_if_not_exception_type")):
            if not expr.args and name.endswith("retry_if_exception_type"):
                return "every exception (retry_if_exception_type() defaults to Exception)"
            if name.endswith("retry_if_exception_type") and any(self._is_catch_all(a.value) for a in expr.args):
                return "every exception (Exception)"
        return None

    def _tenacity_jitters(self, expr: cst.BaseExpression) -> bool:
        for node in _expr_nodes(expr):
            if isinstance(node, cst.Call):
                name = self.model.call_name(node) or ""
                if name in RANDOM_WAITS or _RANDOMISH.search(name.rsplit(".", 1)[-1]):
                    return True
                if name not in FIXED_WAITS and not name.startswith("tenacity."):
                    return True  # a custom wait function: cannot know, assume it jitters
            elif isinstance(node, (cst.Name, cst.Attribute)):
                parent = self.model.parents.get(node)
                if isinstance(parent, cst.Arg) and parent.value is node and node is expr:
                    return True  # a wait strategy kept in a variable: unknown
        return False

    def _backoff(self, context: RetryContext, policy: Policy) -> None:
        call = context.config
        if call is None:
            return
        label = context.label
        name = self.model.call_name(call) or ""
        if name.endswith("on_exception"):
            exceptions = keyword(call, "exception") or positional(call, 1)
            if exceptions is not None and self._is_catch_all(exceptions.value) and keyword(call, "giveup") is None:
                policy.catches_all.append(Verdict(exceptions, f"{label} retries every exception"))
        else:
            predicate = keyword(call, "predicate") or positional(call, 1)
            statuses = self._statuses_in(predicate.value) if predicate is not None else set()
            if statuses:
                policy.non_retryable_statuses.append(
                    Verdict(context.anchor, f"{label} retries on HTTP {_codes(statuses)}, which a retry cannot fix")
                )
        jitter = keyword(call, "jitter")
        if jitter is not None and isinstance(jitter.value, cst.Name) and jitter.value.value == "None":
            fix = self._drop_jitter_none(jitter)
            policy.no_jitter.append(Verdict(jitter, f"{label} turns jitter off (jitter=None)", fix))
        if keyword(call, "max_tries") is None and keyword(call, "max_time") is None:
            policy.unbounded.append(
                Verdict(context.anchor, f"{label} has neither max_tries nor max_time, so it retries forever")
            )

    def _stamina(self, context: RetryContext, policy: Policy) -> None:
        call = context.config
        if call is None:
            return
        label = context.label
        on = keyword(call, "on")
        if on is not None and self._is_catch_all(on.value):
            policy.catches_all.append(Verdict(on, f"{label} retries every exception (on=Exception)"))
        attempts, timeout = keyword(call, "attempts"), keyword(call, "timeout")
        if attempts is not None and timeout is not None and _is_none(attempts.value) and _is_none(timeout.value):
            policy.unbounded.append(Verdict(context.anchor, f"{label} sets attempts=None and timeout=None"))
        jitter = keyword(call, "wait_jitter")
        if jitter is not None and _is_zero(jitter.value):
            policy.no_jitter.append(Verdict(jitter, f"{label} turns jitter off (wait_jitter=0)"))

    def _retrying(self, context: RetryContext, policy: Policy) -> None:
        call = context.config
        label = context.label
        keywords = {a.keyword.value for a in (call.args if call else ()) if a.keyword is not None}
        if not keywords & {"retry_on_exception", "retry_on_result"}:
            policy.catches_all.append(
                Verdict(context.anchor, f"{label} has no retry_on_exception, so it retries every exception")
            )
        if not keywords & {"stop_max_attempt_number", "stop_max_delay", "stop_func", "stop"}:
            policy.unbounded.append(
                Verdict(
                    context.anchor, f"{label} has no stop_max_attempt_number or stop_max_delay, so it retries forever"
                )
            )
        if not keywords & {"wait_random_min", "wait_random_max", "wait_jitter_max", "wait_func", "wait"}:
            policy.no_jitter.append(Verdict(context.anchor, f"{label} waits with no random component"))

    def _retry_package(self, context: RetryContext, policy: Policy) -> None:
        call = context.config
        label = context.label
        exceptions = (keyword(call, "exceptions") or positional(call, 0)) if call else None
        if exceptions is None or self._is_catch_all(exceptions.value):
            policy.catches_all.append(Verdict(exceptions or context.anchor, f"{label} retries every exception"))
        tries = (keyword(call, "tries") or positional(call, 1)) if call else None
        if tries is None or isinstance(tries.value, cst.UnaryOperation):
            policy.unbounded.append(
                Verdict(tries or context.anchor, f"{label} has no tries= bound (the default -1 retries forever)")
            )
        jitter = keyword(call, "jitter") if call else None
        if jitter is None or _is_zero(jitter.value):
            policy.no_jitter.append(Verdict(jitter or context.anchor, f"{label} waits with no jitter"))

    def _celery(self, context: RetryContext, policy: Policy) -> None:
        call = context.config
        model = self.model
        keywords = {name: _Setting(found) for name, found in task_keywords(model, call).items()}
        autoretry = keywords.get("autoretry_for")
        if autoretry is not None and self._is_catch_all(autoretry.value):
            policy.catches_all.append(
                Verdict(autoretry.node, "the Celery task retries every exception (autoretry_for=(Exception,))")
            )
        if autoretry is not None:
            elements = autoretry.value.elements if isinstance(autoretry.value, (cst.Tuple, cst.List)) else ()
            for element in elements:
                if (model.qualname(element.value) or "") in _STATUS_ERRORS:
                    policy.non_retryable_statuses.append(
                        Verdict(
                            element.value,
                            "the Celery task retries HTTPError, which raise_for_status() raises for 4xx too",
                        )
                    )
        max_retries = keywords.get("max_retries")
        if max_retries is not None and _is_none(max_retries.value):
            policy.unbounded.append(Verdict(max_retries.node, "the Celery task retries forever (max_retries=None)"))
        jitter = keywords.get("retry_jitter")
        if "retry_backoff" in keywords and jitter is not None and _is_false(jitter.value):
            policy.no_jitter.append(Verdict(jitter.node, "the Celery task turns jitter off (retry_jitter=False)"))
        delay = keywords.get("default_retry_delay")
        if delay is not None and "retry_backoff" not in keywords:
            policy.no_jitter.append(
                Verdict(
                    delay.node, "the Celery task retries after a fixed default_retry_delay with no backoff or jitter"
                )
            )
        assert isinstance(context.node, cst.FunctionDef)
        for node in iter_nodes(context.node.body):
            if isinstance(node, cst.Call) and (model.dotted(node.func) or "").endswith(".retry"):
                if not any(isinstance(a, cst.ExceptHandler) for a in model.ancestors(node)):
                    continue  # `if not ready: raise self.retry(countdown=5)` polls; it does not retry a failure
                countdown = keyword(node, "countdown")
                if countdown is not None and not self._has_random(countdown.value):
                    policy.no_jitter.append(
                        Verdict(countdown, "self.retry() waits a countdown with no random component")
                    )
                retries = keyword(node, "max_retries")
                if retries is not None and _is_none(retries.value):
                    policy.unbounded.append(Verdict(retries, "self.retry(max_retries=None) retries forever"))
        for handler in self._retrying_handlers(context):
            policy.catches_all.append(handler)

    def _task_object_retry(self, call: cst.Call, retried: set[cst.CSTNode]) -> Policy | None:
        """`task.retry(countdown=...)` in a helper handed the Celery task object (it reads
        `task.request.retries`): the same countdown check as `self.retry()` in a task."""
        model = self.model
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
            for n in iter_nodes(scope.body)
        ):
            return None
        countdown = keyword(call, "countdown")
        policy = Policy(None, call, [], [], [], [])
        if countdown is not None and not self._has_random(countdown.value):
            policy.no_jitter.append(Verdict(countdown, f"{owner}.retry() waits a countdown with no random component"))
        return policy

    def _retrying_handlers(self, context: RetryContext) -> Iterator[Verdict]:
        """`except Exception as exc: raise self.retry(exc=exc)` in a Celery task."""
        model = self.model
        assert isinstance(context.node, cst.FunctionDef)
        for node in iter_nodes(context.node.body):
            if isinstance(node, cst.ExceptHandler) and self._handler_catches_all(node):
                if any(
                    isinstance(n, cst.Call) and (model.dotted(n.func) or "").endswith(".retry")
                    for n in iter_nodes(node.body)
                ):
                    yield Verdict(node, "the Celery task retries every exception (except Exception -> self.retry)")

    def _urllib3(self, call: cst.Call) -> Policy:
        policy = Policy(None, call, [], [], [], [])
        forcelist = keyword(call, "status_forcelist")
        if forcelist is not None:
            statuses = self._status_literals(forcelist.value)
            bad = statuses & NON_RETRYABLE_STATUSES
            if bad:
                policy.non_retryable_statuses.append(
                    Verdict(call, f"Retry(status_forcelist=...) retries HTTP {_codes(bad)}, which a retry cannot fix")
                )
        methods = keyword(call, "allowed_methods") or keyword(call, "method_whitelist")
        if methods is not None:
            texts = {string_value(n) for n in _expr_nodes(methods.value) if isinstance(n, cst.BaseExpression)} - {None}
            unsafe = sorted(m for m in texts if m and m.upper() in ("POST", "PATCH"))
            if unsafe or _is_none(methods.value) or _is_false(methods.value):
                what = ", ".join(unsafe) if unsafe else "every method"
                policy.non_retryable_statuses.append(
                    Verdict(
                        call,
                        f"Retry(allowed_methods=...) retries {what}: a non-idempotent request retried without a key can act twice",
                    )
                )
        factor = keyword(call, "backoff_factor")
        if factor is not None and not _is_zero(factor.value) and keyword(call, "backoff_jitter") is None:
            policy.no_jitter.append(
                Verdict(call, "Retry(backoff_factor=...) has no backoff_jitter, so clients retry in waves")
            )
        total = keyword(call, "total") or positional(call, 0)
        if (
            total is not None
            and _is_none(total.value)
            and not any(keyword(call, k) for k in ("connect", "read", "status", "other"))
        ):
            policy.unbounded.append(Verdict(call, "Retry(total=None) sets no bound on retries"))
        return policy

    # -- hand-written loops -----------------------------------------------------------------

    def _loop(self, context: RetryContext, policy: Policy) -> None:
        loop = context.node
        assert isinstance(loop, (cst.For, cst.While))
        nodes = _loop_nodes(loop)
        # a `while` loop that neither waits, nor talks to the network, nor counts attempts spins
        # on a local condition (a keypress, a non-blocking read): not a retry of a failure
        spins = isinstance(loop, cst.While) and not self._waits_or_talks(nodes) and not self._loop_bounded(loop, nodes)
        for node in nodes:
            if (
                isinstance(node, cst.ExceptHandler)
                and not spins
                and self._handler_catches_all(node)
                and not always_leaves(list(node.body.body))
                and not _filters_exception(node)
                and not self._inside_handler(node, loop)
            ):
                caught = (
                    "every exception"
                    if node.type is None
                    else f"every exception ({self.model.dotted(node.type) or 'Exception'})"
                )
                policy.catches_all.append(
                    Verdict(
                        node, f"the retry loop on line $context retries {caught}, including errors a retry cannot fix"
                    )
                )
            elif isinstance(node, cst.If):
                statuses = self._statuses_in(node.test)
                if statuses and not always_leaves(list(node.body.body)) and _is_status_test(self.model, node.test):
                    policy.non_retryable_statuses.append(
                        Verdict(
                            node,
                            f"the retry loop on line $context retries on HTTP {_codes(statuses)}, which a retry cannot fix",
                        )
                    )
            elif isinstance(node, cst.Call) and self.model.call_name(node) in SLEEPS and node.args:
                if self._deterministic_delay(node.args[0].value):
                    policy.no_jitter.append(
                        Verdict(
                            node,
                            "the retry loop on line $context sleeps a fixed or computed delay with no random component",
                            self._jitter_sleep(node.args[0].value),
                        )
                    )
        if isinstance(loop, cst.While) and not self._loop_bounded(loop, nodes) and self._waits_or_talks(nodes):
            policy.unbounded.append(Verdict(loop, "the retry loop has no attempt limit and no deadline"))
        if isinstance(loop, cst.For) and (
            self.model.call_name(loop.iter) if isinstance(loop.iter, cst.Call) else None
        ) in ("itertools.count", "count"):
            if not self._loop_bounded(loop, nodes):
                policy.unbounded.append(
                    Verdict(loop, "the retry loop counts attempts with itertools.count() and never stops")
                )

    def _poll_bounded(self, loop: cst.While, nodes: list[cst.CSTNode]) -> bool:
        """A counter (`n += 1`) or a clock read compared in the loop bounds a poll;
        the comparison on the polled status does not."""
        model = self.model
        counters = {n.target.value for n in nodes if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name)}

        def clock(expr: cst.CSTNode) -> bool:
            return any(isinstance(c, cst.Call) and (model.call_name(c) or "") in CLOCK_CALLS for c in _expr_nodes(expr))

        for n in nodes:
            if isinstance(n, cst.Comparison):
                for x in _expr_nodes(n):
                    if isinstance(x, cst.Name) and x.value in counters:
                        return True
                    if isinstance(x, cst.Call) and clock(x):
                        return True
                    if isinstance(x, cst.Name):
                        for b in model.bindings_of(model.scope_of(x), x.value):
                            if b.value is not None and clock(b.value):
                                return True
        return False

    def _waits_or_talks(self, nodes: list[cst.CSTNode]) -> bool:
        """A retry loop worth bounding waits between attempts or fails on network errors.
        `while True: try: return sock.recv() except WantRead: wait()` and "try the next
        prime" loops spin on local conditions by design (measured: most of the unbounded
        loops in the standard library and site-packages were of that kind)."""
        for node in nodes:
            if isinstance(node, cst.Call) and self.model.call_name(node) in SLEEPS:
                return True
            if isinstance(node, cst.ExceptHandler) and node.type is not None:
                caught = " ".join(
                    self.model.qualname(n) or "" for n in _expr_nodes(node.type) if isinstance(n, cst.BaseExpression)
                )
                if _NETWORK_ERRORS.search(caught):
                    return True
        return False

    def _inside_handler(self, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
        """A try inside an `except` block (a hook guarded while handling the failure) is not
        the catch that drives the retry."""
        for ancestor in self.model.ancestors(node):
            if ancestor is loop:
                return False
            if isinstance(ancestor, cst.ExceptHandler):
                return True
        return False

    def _loop_bounded(self, loop: cst.For | cst.While, nodes: list[cst.CSTNode]) -> bool:
        """A counter or clock comparison in the loop test, or an `if` on one that leaves."""
        if isinstance(loop, cst.While) and not _is_constant_true(loop.test) and _has_comparison(loop.test):
            return True
        for node in nodes:
            if isinstance(node, cst.If) and _has_comparison(node.test, self.model) and _either_branch_leaves(node):
                return True
            # `if self._check_give_up(timeout=..., start_time=...): raise`: a helper that owns the bound
            if (
                isinstance(node, cst.If)
                and _either_branch_leaves(node)
                and any(
                    isinstance(n, (cst.Name, cst.Attribute)) and _BOUND_WORDS.search(self.model.dotted(n) or "")
                    for n in _expr_nodes(node.test)
                )
            ):
                return True
        return False

    def _deterministic_delay(self, expr: cst.BaseExpression) -> bool:
        """A delay built only from literals, names and arithmetic: nothing random, nothing
        the server said (Retry-After), no helper whose result we cannot see."""
        for node in origin_nodes(self.model, expr):
            if isinstance(node, cst.Call):
                name = self.model.call_name(node) or ""
                if name not in _MATH and not _config_read_with_number(self.model, node):
                    return False
            if isinstance(node, cst.SimpleString) and _SERVER_DELAY.search(node.value):
                return False  # Retry-After: the server said how long
            if isinstance(node, cst.Name) and _RANDOMISH.search(node.value) and not self._bound_to_literal(node):
                return False  # a `jitter` parameter or global we cannot see
            if isinstance(node, cst.Name) and _SERVER_DELAY.search(node.value):
                return False
            if isinstance(node, cst.Name) and self._is_parameter(node):
                return False  # the caller decides the delay: it may well be jittered
        return True

    def _is_parameter(self, name: cst.Name) -> bool:
        parent = self.model.parents.get(name)
        if isinstance(parent, cst.Attribute) and parent.attr is name:
            return False
        if isinstance(parent, cst.Attribute) and parent.value is name:
            # `self.retry_delay`, `task.retry_backoff`: a setting read off an object the caller
            # passed, the same value on every attempt (a jitter-named one is caught above)
            chain: cst.CSTNode = parent
            while isinstance(self.model.parents.get(chain), cst.Attribute):
                chain = self.model.parents[chain]
            return isinstance(chain, cst.Attribute) and bool(_RANDOMISH.search(self.model.dotted(chain) or ""))
        outer: cst.CSTNode = name
        while isinstance(self.model.parents.get(outer), cst.Attribute):
            outer = self.model.parents[outer]
        if isinstance(outer, cst.Attribute) and _ATTEMPTS.search((self.model.dotted(outer) or "").rsplit(".", 1)[-1]):
            return False  # `self.request.retries`: an attempt counter, not a configured delay
        return any(b.kind == "param" for b in self.model.bindings_of(self.model.scope_of(name), name.value))

    def _bound_to_literal(self, name: cst.Name) -> bool:
        model = self.model
        bindings = model.bindings_of(model.scope_of(name), name.value) or model.bindings_of(model.module, name.value)
        return bool(bindings) and all(isinstance(b.value, (cst.Integer, cst.Float)) for b in bindings)

    def _has_random(self, expr: cst.BaseExpression) -> bool:
        """Whether a countdown may be random: a call, a parameter, a jitter-named value."""
        return not self._deterministic_delay(expr)

    # -- fixes ---------------------------------------------------------------------------------

    def _drop_jitter_none(self, jitter: cst.Arg) -> FixPlan:
        """`jitter=None` goes with its comma: backoff's default is full jitter."""
        drop = NodeEdit("delete_item", jitter)
        return FixPlan((drop,), safe=False, description="drop jitter=None (backoff then uses full jitter)")

    def _jitter_sleep(self, delay: cst.BaseExpression) -> FixPlan | None:
        """`sleep(d)` -> `sleep(random.uniform(0, d))`: full jitter over the same cap."""
        import_edits = self._ensure_import("random", None)
        if import_edits is None:
            return None
        code = self.model.module.code_for_node(delay)
        edits = [NodeEdit("replace", delay, f"random.uniform(0, {code})"), *import_edits]
        return FixPlan(tuple(edits), safe=False, description="sleep a random time up to the same delay (full jitter)")

    def _jitter_tenacity_wait(self, wait: cst.BaseExpression) -> FixPlan | None:
        """`wait_fixed(n)` gains `+ wait_random(0, n)`; `wait_exponential(...)` becomes
        `wait_random_exponential(...)` with the same bounds (and its import goes when
        nothing else uses it)."""
        if not isinstance(wait, cst.Call):
            return None
        name = self.model.call_name(wait) or ""
        module = self.model.module
        if name.endswith("wait_fixed") and wait.args:
            new, extra = "wait_random", f" + {{name}}(0, {module.code_for_node(wait.args[0].value)})"
        elif name.endswith("wait_exponential"):
            new, extra = "wait_random_exponential", ""
        else:
            return None
        dotted = self.model.dotted(wait.func) or ""
        if "." in dotted:  # tenacity.wait_fixed(...): the module is imported
            spelled, import_edits = f"{dotted.rsplit('.', 1)[0]}.{new}", []
        else:
            replaced = wait.func if not extra and isinstance(wait.func, cst.Name) else None
            found = self._ensure_import("tenacity", new, replaced)
            if found is None:
                return None
            spelled, import_edits = new, found
        if extra:
            edits = [NodeEdit("replace", wait, module.code_for_node(wait) + extra.format(name=spelled))]
        else:
            edits = [NodeEdit("replace", wait.func, spelled)]
        return FixPlan((*edits, *import_edits), safe=False, description=f"add jitter with {new}")

    def _ensure_import(
        self, module_name: str, name: str | None, replaced: cst.Name | None = None
    ) -> list[NodeEdit] | None:
        """The edits that make `random` (or `from tenacity import name`) available, placed
        where isort puts them; none when it already is, None when a local name is in the way
        or the module imports nothing at its top level.

        `replaced` is a use of a from-imported name that the fix rewrites: its import goes
        when nothing else uses the name. When something does, the fix still rewrites that
        import statement unchanged, so that fixes which may edit it apply one per round and
        the last one sees that the name is no longer used."""
        model = self.model
        local = name or module_name
        wanted = f"{module_name}.{name}" if name else module_name
        present = model.imports.get(local) == wanted
        if not present and (local in model.imports or model.bindings_of(model.module, local)):
            return None
        old = self._top_level_import_of(replaced.value) if replaced is not None else None
        drop = old is not None and self._name_uses().get(replaced.value, 0) <= 1  # type: ignore[union-attr]
        target = None
        if name and not present:
            # `from tenacity import ...` statements; isort keeps `import x as y` ones apart
            candidates = [
                (line, line.body[0])
                for line in model.module.body
                if isinstance(line, cst.SimpleStatementLine)
                and len(line.body) == 1
                and isinstance(line.body[0], cst.ImportFrom)
                and not line.body[0].relative
                and line.body[0].module is not None
                and model.dotted(line.body[0].module) == module_name
                and not isinstance(line.body[0].names, cst.ImportStar)
            ]
            plain = [c for c in candidates if any(a.asname is None for a in c[1].names)]  # type: ignore[union-attr]
            old_here = old is not None and any(c[1] is old[1] for c in candidates)
            if old_here and old[2].asname is None:  # type: ignore[index]
                target = old[0], old[1]  # type: ignore[index]
            elif plain:
                target = plain[0]
            elif old_here and drop:  # `from tenacity import wait_exponential as w` becomes the plain import
                target = old[0], old[1]  # type: ignore[index]
        edits = []
        if old is not None and (target is None or old[1] is not target[1]):
            edits.extend(self._edit_from_import(old[0], old[1], None, old[2] if drop else None))
        if target is not None:
            remove = old[2] if drop and old is not None and old[1] is target[1] else None
            edits.extend(self._edit_from_import(target[0], target[1], name, remove))
        elif not present:
            block = self._import_block()
            if not block:
                return None
            code = f"from {module_name} import {name}\n" if name else f"import {module_name}\n"
            edits.append(
                self._insert_import(block, code, _stdlib_or_other(module_name), (name is not None, module_name))
            )
        return edits

    def _import_block(self) -> list[cst.SimpleStatementLine]:
        """The first run of import statements at the module's top level (its docstring may
        come before): the block isort sorts, and where a fix's import goes."""
        block: list[cst.SimpleStatementLine] = []
        for line in self.model.module.body:
            if (
                isinstance(line, cst.SimpleStatementLine)
                and len(line.body) == 1
                and isinstance(line.body[0], (cst.Import, cst.ImportFrom))
            ):
                block.append(line)
            elif block:
                break
        return block

    def _top_level_import_of(
        self, local: str
    ) -> tuple[cst.SimpleStatementLine, cst.ImportFrom, cst.ImportAlias] | None:
        """The top-level `from ... import` that binds `local`, and its alias."""
        for line in self.model.module.body:
            if not isinstance(line, cst.SimpleStatementLine):
                continue
            for statement in line.body:
                if isinstance(statement, cst.ImportFrom) and not isinstance(statement.names, cst.ImportStar):
                    for alias in statement.names:
                        bound = alias.asname.name if alias.asname is not None else alias.name
                        if isinstance(bound, cst.Name) and bound.value == local:
                            return (line, statement, alias) if len(line.body) == 1 else None
        return None

    def _name_uses(self) -> dict[str, int]:
        """How often each name is read (or bound other than by an import) in the module,
        strings equal to it counted too (`__all__`): a name with no use is an unused import."""
        uses: dict[str, int] | None = getattr(self, "_name_uses_cache", None)
        if uses is None:
            uses = {}
            parents = self.model.parents
            for node in iter_nodes(self.model.module, stop_at_functions=False):
                if not isinstance(node, cst.Name):
                    continue
                parent = parents.get(node)
                if (
                    isinstance(parent, (cst.ImportAlias, cst.AsName, cst.ImportFrom))
                    or (isinstance(parent, cst.Attribute) and parent.attr is node)
                    or (isinstance(parent, cst.Arg) and parent.keyword is node)
                ):
                    continue
                uses[node.value] = uses.get(node.value, 0) + 1
            for string in self.model.strings:
                value = string_value(string)
                if value is not None:
                    uses[value] = uses.get(value, 0) + 1
            self._name_uses_cache = uses
        return uses

    def _edit_from_import(
        self, line: cst.SimpleStatementLine, statement: cst.ImportFrom, add: str | None, drop: cst.ImportAlias | None
    ) -> list[NodeEdit]:
        """`from m import ...` with `add` among its names in isort's order and `drop` gone
        (the whole line when nothing is left), written in the statement's own layout; a
        single line that grows past 88 characters is wrapped one name a line as isort does,
        a comment at its end moving up behind the `(`."""
        module = self.model.module
        if add is None and drop is None:  # unchanged: only claims the statement for this round
            return [NodeEdit("replace", statement, module.code_for_node(statement))]
        aliases = list(statement.names)  # type: ignore[arg-type]
        if drop is not None:
            index = next(i for i, alias in enumerate(aliases) if alias is drop)
            del aliases[index]
            if not aliases and add is None:
                return [NodeEdit("delete_line", line)]
            if aliases and index == len(aliases):  # the last name went: the one before takes its comma
                aliases[-1] = aliases[-1].with_changes(comma=_merge_commas(aliases[-1].comma, drop.comma))
        if add is not None:
            aliases = _insert_alias(statement, aliases, add)
        new = statement.with_changes(names=aliases)
        code = module.code_for_node(new)
        trailing = line.trailing_whitespace
        comment = trailing.comment.value if trailing.comment else ""
        if (
            "\n" in code
            or statement.lpar is not None
            or len(code) + len(trailing.whitespace.value) + len(comment) <= 88
        ):
            return [NodeEdit("replace", statement, code)]
        if not comment:
            return [NodeEdit("replace", statement, module.code_for_node(_wrapped(new)))]
        wrapped = _wrapped(new, cst.TrailingWhitespace(cst.SimpleWhitespace("  "), trailing.comment))
        code = module.code_for_node(
            line.with_changes(body=[wrapped], leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())
        )
        return [NodeEdit("delete_line", line), NodeEdit("insert_before", line, code)]

    def _insert_import(
        self, block: list[cst.SimpleStatementLine], code: str, section: int, key: tuple[bool, str]
    ) -> NodeEdit:
        """`code` (one import statement) into the import block where isort puts it: in sorted
        order in the first group of its section (plain imports before `from` imports), else
        as a group of its own after the groups of the sections before it."""
        sections = [_import_section(line.body[0]) for line in block]  # type: ignore[arg-type]
        groups = [0]
        for line in block[1:]:
            groups.append(groups[-1] + _starts_group(line))
        same = [i for i, s in enumerate(sections) if s == section]
        if same:
            members = [i for i in same if groups[i] == groups[same[0]]]
            sort_key = (key[0], _natural(key[1].lower()), key[1])
            before = [i for i in members if _import_sort_key(block[i].body[0]) <= sort_key]  # type: ignore[arg-type]
            if before:
                return NodeEdit("insert_after", block[before[-1]], code)
            return NodeEdit("insert_before", block[members[0]], code)
        earlier = [i for i, s in enumerate(sections) if s < section]
        if not earlier:
            return NodeEdit("insert_before", block[0], code + "\n")
        last = earlier[-1]
        apart = last + 1 == len(block) or _starts_group(block[last + 1])
        return NodeEdit("insert_after", block[last], "\n" + code + ("" if apart else "\n"))

    # -- exceptions and statuses --------------------------------------------------------------

    def _is_catch_all(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, (cst.Tuple, cst.List)):
            return any(self._is_catch_all(e.value) for e in expr.elements)
        return (self.model.qualname(expr) or "") in CATCH_ALL

    def _handler_catches_all(self, handler: cst.ExceptHandler) -> bool:
        return handler.type is None or self._is_catch_all(handler.type)

    def _statuses_in(self, expr: cst.BaseExpression) -> set[int]:
        """Non-retryable status codes named in an expression (`in (400, 404)`, `== 422`)."""
        found = set()
        for node in (expr, *iter_nodes(expr, stop_at_functions=False)):  # into lambda predicates
            if isinstance(node, cst.Integer):
                try:
                    value = int(node.value)
                except ValueError:
                    continue
                if value in NON_RETRYABLE_STATUSES:
                    found.add(value)
        return found

    def _status_literals(self, expr: cst.BaseExpression) -> set[int]:
        out = set()
        for node in origin_nodes(self.model, expr):
            if isinstance(node, cst.Integer):
                try:
                    out.add(int(node.value))
                except ValueError:
                    pass
        return out


def _is_status_test(model: ModuleModel, test: cst.BaseExpression) -> bool:
    return (
        any(
            isinstance(n, (cst.Name, cst.Attribute)) and re.search(r"status", model.dotted(n) or "", re.IGNORECASE)
            for n in iter_nodes(test)
        )
        or isinstance(test, (cst.Name, cst.Attribute))
        and "status" in (model.dotted(test) or "")
    )


def _filters_exception(handler: cst.ExceptHandler) -> bool:
    """`except Exception as e: if not retryable(e): raise` inspects what it caught."""
    if handler.name is None or not isinstance(handler.name.name, cst.Name):
        return False
    caught = handler.name.name.value
    for node in iter_nodes(handler.body):
        if isinstance(node, cst.If) and any(
            isinstance(n, cst.Name) and n.value == caught for n in _expr_nodes(node.test)
        ):
            if _either_branch_leaves(node):
                return True
    return False


def _either_branch_leaves(node: cst.If) -> bool:
    """`if attempts < limit: sleep() else: raise` bounds the loop as well as `if ...: raise`."""
    if always_leaves(list(node.body.body)):
        return True
    other = node.orelse
    if other is None:
        return False
    return always_leaves([other] if isinstance(other, cst.If) else list(other.body.body))


def _expr_nodes(expr: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield expr
    yield from iter_nodes(expr)


def _has_comparison(test: cst.BaseExpression, model: ModuleModel | None = None) -> bool:
    """A comparison in the test, or in what a flag it reads was set to
    (`exceeded = tries >= max_tries` ... `if exceeded: raise`)."""
    nodes = origin_nodes(model, test) if model is not None else _expr_nodes(test)
    return any(isinstance(n, cst.Comparison) for n in nodes)


def _is_constant_true(test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.Name) and test.value == "True" or isinstance(test, cst.Integer) and test.value != "0"


def _is_none(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "None"


def _is_false(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "False"


def _is_zero(expr: cst.BaseExpression) -> bool:
    return isinstance(expr, (cst.Integer, cst.Float)) and float(expr.value.replace("_", "")) == 0


def _codes(statuses: set[int]) -> str:
    return ", ".join(str(s) for s in sorted(statuses))


def _config_read_with_number(model: ModuleModel, call: cst.Call) -> bool:
    """`kwargs.pop("delay", 0.5)` / `options.get("delay", 1)`: a setting with a numeric default."""
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value not in ("pop", "get"):
        return False
    if len(call.args) != 2 or not isinstance(call.args[1].value, (cst.Integer, cst.Float)):
        return False
    key = string_value(call.args[0].value) or ""
    return not _RANDOMISH.search(key)


# -- import layout for fixes, as isort (and ruff's I rules) lay imports out -----------------------


def _import_section(statement: cst.Import | cst.ImportFrom) -> int:
    """0 for `from __future__`, 1 for the standard library, 2 for other absolute imports
    (third-party and first-party: which is which needs the project layout), 3 for relative."""
    if isinstance(statement, cst.ImportFrom):
        if statement.relative:
            return 3
        if statement.module is None:
            return 2
        name = _dotted_code(statement.module)
        if name == "__future__":
            return 0
    else:
        name = _dotted_code(statement.names[0].name)
    return _stdlib_or_other(name)


def _stdlib_or_other(module_name: str) -> int:
    import sys

    return 1 if module_name.partition(".")[0] in sys.stdlib_module_names else 2


def _dotted_code(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Attribute):
        return f"{_dotted_code(expr.value)}.{expr.attr.value}"
    return expr.value if isinstance(expr, cst.Name) else ""


def _import_sort_key(statement: cst.Import | cst.ImportFrom) -> tuple[bool, list[int | str], str]:
    """isort's order inside a section: plain imports first, then by module name, ignoring
    case and reading digits as numbers."""
    if isinstance(statement, cst.ImportFrom):
        name = "." * len(statement.relative) + (_dotted_code(statement.module) if statement.module else "")
    else:
        name = _dotted_code(statement.names[0].name)
    return (isinstance(statement, cst.ImportFrom), _natural(name.lower()), name)


def _member_sort_key(name: str) -> tuple[int, list[int | str], list[int | str]]:
    """isort's order of the names in `from m import ...`: CONSTANTS, Classes, then the rest."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return (kind, _natural(name.lower()), _natural(name))


def _natural(text: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _starts_group(line: cst.SimpleStatementLine) -> bool:
    """Whether a blank line separates this import from the one before it."""
    return any(empty.comment is None for empty in line.leading_lines)


def _insert_alias(statement: cst.ImportFrom, aliases: list[cst.ImportAlias], name: str) -> list[cst.ImportAlias]:
    """`aliases` with `name` added in sorted place, laid out like its neighbours: on a line of
    its own in an import written one name a line, else after `, `."""
    key = _member_sort_key(name)
    index = next((i for i, a in enumerate(aliases) if _member_sort_key(_dotted_code(a.name)) > key), len(aliases))
    layouts = [a.comma.whitespace_after for a in aliases[:-1] if isinstance(a.comma, cst.Comma)]
    if statement.lpar is not None:
        layouts.insert(0, statement.lpar.whitespace_after)
    own_line = next((w for w in layouts if isinstance(w, cst.ParenthesizedWhitespace)), None)
    if own_line is not None:
        between = cst.Comma(whitespace_after=own_line.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=()))
    else:
        between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    added = cst.ImportAlias(name=cst.Name(name), comma=between)
    if not aliases:
        return [added.with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    if index < len(aliases):
        return [*aliases[:index], added, *aliases[index:]]
    last = aliases[-1]  # the new name goes last and takes the last one's comma (trailing or none)
    return [
        *aliases[:-1],
        last.with_changes(comma=_merge_commas(last.comma, between)),
        added.with_changes(comma=_without_comment(last.comma)),
    ]


def _merge_commas(
    kept: cst.Comma | cst.MaybeSentinel, following: cst.Comma | cst.MaybeSentinel
) -> cst.Comma | cst.MaybeSentinel:
    """The comma for an item that now ends where another one did: `following`, keeping the
    comment after `kept` when both end their lines."""
    if (
        isinstance(kept, cst.Comma)
        and isinstance(following, cst.Comma)
        and isinstance(kept.whitespace_after, cst.ParenthesizedWhitespace)
        and isinstance(following.whitespace_after, cst.ParenthesizedWhitespace)
    ):
        return following.with_changes(
            whitespace_after=following.whitespace_after.with_changes(first_line=kept.whitespace_after.first_line)
        )
    return following


def _without_comment(comma: cst.Comma | cst.MaybeSentinel) -> cst.Comma | cst.MaybeSentinel:
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        return comma.with_changes(
            whitespace_after=comma.whitespace_after.with_changes(first_line=cst.TrailingWhitespace())
        )
    return comma


def _wrapped(statement: cst.ImportFrom, first_line: cst.TrailingWhitespace | None = None) -> cst.ImportFrom:
    """`from m import (` with one name a line and a trailing comma, then `)`."""
    aliases = list(statement.names)  # type: ignore[arg-type]

    def line_break(indent: str, first: cst.TrailingWhitespace | None = None) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(
            first_line=first or cst.TrailingWhitespace(), last_line=cst.SimpleWhitespace(indent)
        )

    names = [
        alias.with_changes(comma=cst.Comma(whitespace_after=line_break("" if i == len(aliases) - 1 else "    ")))
        for i, alias in enumerate(aliases)
    ]
    return statement.with_changes(
        names=names, lpar=cst.LeftParen(whitespace_after=line_break("    ", first_line)), rpar=cst.RightParen()
    )
