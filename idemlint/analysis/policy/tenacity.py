"""tenacity (`@retry`, `Retrying(...)`) and its predecessor `retrying`: what the `retry=`,
`stop=` and `wait=` arguments (or `retrying`'s keywords) say."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, keyword
from idemlint.analysis.policy.common import expr_nodes, is_catch_all, statuses_in
from idemlint.analysis.policy.delays import RANDOMISH
from idemlint.analysis.policy.fixes import jitter_tenacity_wait
from idemlint.analysis.policy.records import Policy, Verdict
from idemlint.analysis.retry import RetryContext
from idemlint.analysis.retry.functions import tenacity_alternatives
from idemlint.knowledge.retries import TENACITY, TENACITY_FIXED_WAITS, TENACITY_RANDOM_WAITS, TENACITY_UNBOUNDED_STOPS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def read_tenacity(model: ModuleModel, context: RetryContext, policy: Policy) -> None:
    call = context.config
    label, anchor = context.label, context.anchor
    retry_arg = keyword(call, "retry") if call else None
    if retry_arg is None:
        policy.catches_all.append(Verdict("no-filter", TENACITY, anchor, label))
    else:
        caught = _catches_all(model, retry_arg.value)
        if caught is not None:
            kind, spared = caught
            policy.catches_all.append(Verdict(kind, TENACITY, anchor, label, owner=spared))
        statuses = statuses_in(retry_arg.value)
        if statuses:
            policy.non_retryable_statuses.append(
                Verdict("non-retryable-status", TENACITY, anchor, label, statuses=statuses)
            )
    stop_arg = keyword(call, "stop") if call else None
    if stop_arg is None:
        policy.unbounded.append(Verdict("no-bound", TENACITY, anchor, label))
    elif any(
        model.qualname(n) in TENACITY_UNBOUNDED_STOPS
        for n in expr_nodes(stop_arg.value)
        if isinstance(n, (cst.Name, cst.Attribute))
    ):
        policy.unbounded.append(Verdict("stop-never", TENACITY, stop_arg, label))
    wait_arg = keyword(call, "wait") if call else None
    if wait_arg is None:
        policy.no_jitter.append(Verdict("no-wait", TENACITY, anchor, label))
    elif not _jitters(model, wait_arg.value):
        fix = jitter_tenacity_wait(model, wait_arg.value)
        policy.no_jitter.append(Verdict("fixed-wait", TENACITY, wait_arg, label, fix=fix))


def _catches_all(model: ModuleModel, expr: cst.BaseExpression) -> tuple[str, str] | None:
    """`retry_if_exception_type(Exception)` ("catch-all"), `retry_if_exception_type()`
    ("catch-all-default"), every exception but a few (`retry_if_not_exception_type(NotFound)`,
    `retry_if_exception(lambda e: not isinstance(e, NotFound))`: "catch-all-rest", with the
    classes it spares), or a `|` / `retry_any` with such a part (an `&` narrows)."""
    return next(
        (found for part in tenacity_alternatives(model, expr) if (found := _part_catches_all(model, part))), None
    )


def _part_catches_all(model: ModuleModel, expr: cst.BaseExpression) -> tuple[str, str] | None:
    if not isinstance(expr, cst.Call):
        return None
    name = model.call_name(expr) or ""
    if name.endswith("retry_if_exception_type"):
        if not expr.args:
            return "catch-all-default", ""  # retry_if_exception_type() defaults to Exception
        if any(is_catch_all(model, a.value) for a in expr.args):
            return "catch-all", ""
    if name.endswith("retry_if_not_exception_type") and expr.args:
        return "catch-all-rest", _spelt(model, expr.args[0].value)
    if name.endswith("retry_if_exception") and expr.args:
        spared = _spared_by_predicate(model, expr.args[0].value)
        if spared is not None:
            return "catch-all-rest", _spelt(model, spared)
    return None


def _spared_by_predicate(model: ModuleModel, predicate: cst.BaseExpression) -> cst.BaseExpression | None:
    """The classes a predicate says no to and nothing else: `lambda e: not isinstance(e, X)`, or
    a function of the module or class every return of which is `not isinstance(exc, X)`."""
    tests: list[cst.BaseExpression | None] = []
    if isinstance(predicate, cst.Lambda):
        tests = [predicate.body]
    elif isinstance(predicate, cst.Name):
        bound = model.resolve(model.scope_of(predicate), predicate.value)
        if len(bound) == 1 and bound[0].kind == "def":
            tests = [r.value for r in model.returns.get(bound[0].statement, [])]
    spared = [_not_an_instance_of(model, test) for test in tests]
    return spared[0] if len(spared) == 1 else None


def _not_an_instance_of(model: ModuleModel, test: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """`not isinstance(e, X)`: X."""
    if not (isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)):
        return None
    call = test.expression
    if isinstance(call, cst.Call) and model.call_name(call) == "isinstance" and len(call.args) == 2:
        return call.args[1].value
    return None


def _spelt(model: ModuleModel, classes: cst.BaseExpression) -> str:
    """`NotFound`, `UrlNotFound or ResourceGone`: the classes a policy does not retry."""
    elements = [e.value for e in classes.elements] if isinstance(classes, (cst.Tuple, cst.List)) else [classes]
    return " or ".join((model.dotted(e) or "...").rsplit(".", 1)[-1] for e in elements)


def _jitters(model: ModuleModel, expr: cst.BaseExpression) -> bool:
    for node in expr_nodes(expr):
        if isinstance(node, cst.Call):
            name = model.call_name(node) or ""
            if name in TENACITY_RANDOM_WAITS or RANDOMISH.search(name.rsplit(".", 1)[-1]):
                return True
            if name not in TENACITY_FIXED_WAITS and not name.startswith(TENACITY + "."):
                return True  # a custom wait function: cannot know, assume it jitters
        elif isinstance(node, (cst.Name, cst.Attribute)):
            parent = model.parents.get(node)
            if isinstance(parent, cst.Arg) and parent.value is node and node is expr:
                return True  # a wait strategy kept in a variable: unknown
    return False


def read_retrying(model: ModuleModel, context: RetryContext, policy: Policy) -> None:
    call = context.config
    label, anchor = context.label, context.anchor
    keywords = {a.keyword.value for a in (call.args if call else ()) if a.keyword is not None}
    if not keywords & {"retry_on_exception", "retry_on_result"}:
        policy.catches_all.append(Verdict("no-filter", "retrying", anchor, label))
    if not keywords & {"stop_max_attempt_number", "stop_max_delay", "stop_func", "stop"}:
        policy.unbounded.append(Verdict("no-bound", "retrying", anchor, label))
    if not keywords & {"wait_random_min", "wait_random_max", "wait_jitter_max", "wait_func", "wait"}:
        policy.no_jitter.append(Verdict("fixed-wait", "retrying", anchor, label))
