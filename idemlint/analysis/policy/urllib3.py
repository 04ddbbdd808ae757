"""urllib3's `Retry(...)` (also through requests): the statuses and methods it retries, its
backoff, and its total. The object is a policy of its own: where it is mounted is not followed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, iter_nodes, keyword, positional, string_value
from idemlint.analysis.policy.common import (
    NON_RETRYABLE_STATUSES,
    expr_nodes,
    is_false,
    is_none,
    is_zero,
    spread_settings,
    status_literals,
)
from idemlint.analysis.policy.records import Policy, Verdict
from idemlint.knowledge.http import NOT_IDEMPOTENT_METHODS
from idemlint.knowledge.retries import URLLIB3

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def read_urllib3_retry(
    model: ModuleModel, call: cst.Call, setting: Callable[[str], cst.Arg | None] | None = None
) -> Policy:
    """The policy a `Retry(...)` call makes; `setting` reads its arguments another way (a
    subclass's `super().__init__(**kwargs)`, see `retry_subclass_settings`)."""
    if setting is None:
        spread = spread_settings(model, call)

        def setting(name: str) -> cst.Arg | None:
            found = keyword(call, name)
            if found is None and name in spread:  # `Retry(**retry_args)`
                return cst.Arg(value=spread[name], keyword=cst.Name(name))
            return found

    policy = Policy.empty(None, call)
    forcelist = setting("status_forcelist")
    if forcelist is not None:
        bad = status_literals(model, forcelist.value) & NON_RETRYABLE_STATUSES
        if bad:
            policy.non_retryable_statuses.append(
                Verdict("non-retryable-status", URLLIB3, call, statuses=tuple(sorted(bad)))
            )
    methods = setting("allowed_methods") or setting("method_whitelist")
    if methods is not None:
        value = _as_passed(model, methods.value)
        texts = {string_value(n) for n in expr_nodes(value) if isinstance(n, cst.BaseExpression)} - {None}
        unsafe = sorted(m for m in texts if m and m.upper() in NOT_IDEMPOTENT_METHODS)
        if unsafe or is_none(value) or is_false(value):  # None/False: every method
            policy.non_retryable_statuses.append(Verdict("unsafe-methods", URLLIB3, call, methods=tuple(unsafe)))
    factor = setting("backoff_factor")
    if factor is not None and not is_zero(factor.value) and setting("backoff_jitter") is None:
        policy.no_jitter.append(Verdict("fixed-wait", URLLIB3, call))
    total = setting("total") or positional(call, 0)
    if (
        total is not None
        and is_none(total.value)
        and not any(setting(k) for k in ("connect", "read", "status", "other"))
    ):
        policy.unbounded.append(Verdict("no-bound", URLLIB3, call))
    return policy


def _as_passed(model: ModuleModel, value: cst.BaseExpression) -> cst.BaseExpression:
    """A parameter handed on as it is (`allowed_methods=allowed_methods`) holds its default
    wherever a caller gives none: that default, else `value`."""
    if isinstance(value, cst.Name):
        scope = model.scope_of(value)
        bindings = model.resolve(scope, value.value)
        tests = [n.test for n in iter_nodes(scope) if isinstance(n, (cst.If, cst.IfExp, cst.While))]
        tests += [n for n in iter_nodes(scope) if isinstance(n, cst.BooleanOperation)]  # `methods or DEFAULT`
        # `if allowed_methods is None: ...` decides what is passed: not the default
        tested = any(isinstance(n, cst.Name) and n.value == value.value for t in tests for n in (t, *iter_nodes(t)))
        if len(bindings) == 1 and bindings[0].kind == "param" and bindings[0].value is not None and not tested:
            return bindings[0].value
    return value


def retry_subclass_settings(model: ModuleModel, call: cst.Call) -> Callable[[str], cst.Arg | None] | None:
    """For `super().__init__(...)` in the `__init__` of a class that extends urllib3's `Retry`:
    its settings, from the call's keywords and from `kwargs["name"] = value` on the `**kwargs`
    it passes on (`kwargs["allowed_methods"] = ... | {"POST"}`). None for any other call."""
    from idemlint.knowledge.retries import URLLIB3_RETRY

    func = call.func
    if not (
        isinstance(func, cst.Attribute)
        and func.attr.value == "__init__"
        and isinstance(func.value, cst.Call)
        and model.dotted(func.value.func) == "super"
    ):
        return None
    method = model.enclosing_function(call)
    owner = model.enclosing_class(call)
    if method is None or owner is None or method.name.value != "__init__":
        return None
    if not any(model.qualname(base.value) in URLLIB3_RETRY for base in owner.bases):
        return None
    passed = next((a.value.value for a in call.args if a.star == "**" and isinstance(a.value, cst.Name)), None)
    assigned: dict[str, cst.BaseExpression] = {}
    for target, value, _statement in model.subscript_assigns:
        if (
            passed is not None
            and model.is_inside(target, method)
            and isinstance(target.value, cst.Name)
            and target.value.value == passed
            and len(target.slice) == 1
            and isinstance(target.slice[0].slice, cst.Index)
            and (name := string_value(target.slice[0].slice.value)) is not None
        ):
            assigned[name] = value

    methods = {statement.name.value for statement in owner.body.body if isinstance(statement, cst.FunctionDef)}
    return settings_of(call, methods, assigned)


def settings_of(
    call: cst.Call, methods: Iterable[str], assigned: Mapping[str, cst.BaseExpression] | None = None
) -> Callable[[str], cst.Arg | None]:
    """The settings a call that builds a subclass of `Retry` gives it: its keywords and, for a
    `super().__init__(**kwargs)` in the subclass, what its `__init__` puts in those `kwargs`
    (`assigned`). A subclass that decides each retry itself (`methods` has `increment` or
    `is_retry`) may retry a listed status only when the response says so (a 403 that is a rate
    limit): its list is not read; one that computes its own wait (`get_backoff_time`, `sleep`)
    may add the jitter: its backoff is not read."""
    methods = set(methods)
    decides = bool({"increment", "is_retry"} & methods)
    waits_itself = bool({"get_backoff_time", "sleep", "_sleep_backoff"} & methods)
    assigned = assigned or {}

    def setting(name: str) -> cst.Arg | None:
        if name == "status_forcelist" and decides or name == "backoff_factor" and waits_itself:
            return None
        found = keyword(call, name)
        if found is None and name in assigned:
            return cst.Arg(value=assigned[name], keyword=cst.Name(name))
        return found

    return setting
