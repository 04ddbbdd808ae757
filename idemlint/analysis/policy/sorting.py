"""Handlers that sort what they caught: `except Exception as e: if not retryable(e): raise`
classifies the failure, so it does not retry every exception; and whether a handler's retry
(a task's `self.retry()`, a retry loop's `continue`) is made only for what its test on the
exception lets through."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, iter_nodes
from idemlint.analysis.policy.common import expr_nodes
from idemlint.analysis.retry import always_leaves
from idemlint.analysis.retry.loops import classify_loop
from idemlint.knowledge.timeouts import TIMEOUT_EXCEPTIONS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def filters_exception(handler: cst.ExceptHandler) -> bool:
    """`except Exception as e: if not retryable(e): raise` inspects what it caught, directly or
    through a value taken from it (`status = status_of(e)` ... `if not should_retry(status):
    raise`): it classifies the failure, so it does not retry every exception."""
    read = _caught_names(handler)
    return bool(read) and any(
        isinstance(node, cst.If) and _reads(node.test, read) and either_branch_leaves(node)
        for node in iter_nodes(handler.body)
    )


def _reads(expr: cst.BaseExpression, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in expr_nodes(expr))


def either_branch_leaves(node: cst.If) -> bool:
    """`if attempts < limit: sleep() else: raise` bounds the loop as well as `if ...: raise`."""
    if always_leaves(list(node.body.body)):
        return True
    other = node.orelse
    if other is None:
        return False
    return always_leaves([other] if isinstance(other, cst.If) else list(other.body.body))


def _caught_names(handler: cst.ExceptHandler) -> set[str]:
    """The caught exception's name and the names assigned from it in the handler."""
    if handler.name is None or not isinstance(handler.name.name, cst.Name):
        return set()
    read = {handler.name.name.value}
    for node in iter_nodes(handler.body):
        if isinstance(node, cst.Assign) and _reads(node.value, read):
            read.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
    return read


def retries_only_what_it_sorts(model: ModuleModel, handler: cst.ExceptHandler) -> bool:
    """Every retry the handler makes (a task's `.retry()`, a retry loop's `continue`) is in a
    branch of a test on what it caught (`if is_transient(exc): raise self.retry(exc=exc)`), and
    there is one; `if isinstance(exc, KeyError): return` then `raise self.retry()` retries all
    the rest."""
    retries = list(_retries_in(model, handler))
    return bool(retries) and all(_sorted_before(model, handler, node) is not None for node in retries)


def may_retry_a_timeout(model: ModuleModel, handler: cst.ExceptHandler) -> bool:
    """Some retry the handler makes is in a branch of a test on what it caught that may let a
    timeout through: a classifier the project wrote (`if is_transient(exc):`), not a test of
    classes that holds no timeout (`if isinstance(exc, HTTPError) and ...:`)."""
    for node in _retries_in(model, handler):
        test = _sorted_before(model, handler, node)
        if test is not None and _may_pass_a_timeout(model, test):
            return True
    return False


def _retries_in(model: ModuleModel, handler: cst.ExceptHandler) -> list[cst.CSTNode]:
    """A task's `.retry(...)` calls in the handler, and its `continue`s where the loop around
    the handler retries (in a batch loop, `continue` goes on to the next item)."""
    loop = next((a for a in model.ancestors(handler) if isinstance(a, (cst.For, cst.While))), None)
    retrying_loop = loop is not None and classify_loop(model, loop) is not None
    return [
        node
        for node in iter_nodes(handler.body)
        if isinstance(node, cst.Call)
        and (model.dotted(node.func) or "").endswith(".retry")
        or isinstance(node, cst.Continue)
        and retrying_loop
    ]


def _sorted_before(model: ModuleModel, handler: cst.ExceptHandler, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The test on what the handler caught whose branch holds `node`, if there is one."""
    read = _caught_names(handler)
    for ancestor in model.ancestors(node):
        if ancestor is handler:
            return None
        if isinstance(ancestor, cst.If) and not model.is_inside(node, ancestor.test) and _reads(ancestor.test, read):
            return ancestor.test
    return None


def _may_pass_a_timeout(model: ModuleModel, test: cst.BaseExpression) -> bool:
    """A test of the caught exception's class lets a timeout through only if it names one, or a
    base class of one; a test of anything else (a classifier's answer, a status) may."""
    classes = [
        arg.value
        for node in expr_nodes(test)
        if isinstance(node, cst.Call) and model.dotted(node.func) == "isinstance" and len(node.args) == 2
        for arg in node.args[1:]
    ]
    if not classes:
        return True
    named = [e.value for c in classes for e in (c.elements if isinstance(c, cst.Tuple) else [c])]  # type: ignore[union-attr]
    return any((model.qualname(e) or "") in TIMEOUT_EXCEPTIONS | {"Exception", "BaseException"} for e in named)
