"""Handlers that sort what they caught: `except Exception as e: if not retryable(e): raise`
classifies the failure, so it does not retry every exception; and whether a handler's retry
(a task's `self.retry()`, a retry loop's `continue`) is made only for what its test on the
exception lets through."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, iter_nodes
from idemlint.analysis.policy.common import expr_nodes, is_task_retry
from idemlint.analysis.retry import always_leaves
from idemlint.analysis.retry.exits import leaves_or_raises
from idemlint.analysis.retry.loops import classify_loop
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.timeouts import TIMEOUT_BASES, TIMEOUT_EXCEPTIONS

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


def sorted_by_marking(model: ModuleModel, handler: cst.ExceptHandler) -> bool:
    """A catch-all after a clause that re-raises a class this module raises to mark failures
    (`except PermanentError as e: raise e.inner`, where the attempt itself says `raise
    PermanentError(error)` of what a retry cannot fix): the code that raises sorts the failures,
    and the catch-all retries only what it let through."""
    owner = model.parents.get(handler)
    if not isinstance(owner, (cst.Try, cst.TryStar)):
        return False
    marked: set[str] = set()
    for earlier in owner.handlers:
        if earlier is handler:
            break
        if earlier.type is not None and always_leaves(list(earlier.body.body)):
            marked.update(model.dotted(c) or "" for c in caught_classes(earlier.type))
    marked &= {c.name.value for c in model.classes}  # a class of its own, not `ValueError`
    return bool(marked) and any(
        isinstance(node, cst.Raise)
        and isinstance(node.exc, cst.Call)
        and model.dotted(node.exc.func) in marked
        and not any(model.is_inside(node, h) for h in owner.handlers)
        for node in model.iter_nodes(model.module, stop_at_functions=False)
    )


def tests_only_the_caught(model: ModuleModel, node: cst.If) -> bool:
    """A test, in a handler, of nothing but the caught error (`if e.errno == 111: raise`): it
    sorts the failures; it does not count them."""
    handler = next((a for a in model.ancestors(node) if isinstance(a, cst.ExceptHandler)), None)
    read = {  # the names read, not the attributes read from them (`errno` of `e.errno`)
        n.value
        for n in expr_nodes(node.test)
        if isinstance(n, cst.Name)
        and not (isinstance(parent := model.parents.get(n), cst.Attribute) and parent.attr is n)
    }
    caught = handler.name.name if handler is not None and handler.name is not None else None
    test = node.test
    sorts = isinstance(test, cst.Comparison) and all(
        isinstance(c.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn)) and _literal(c.comparator)
        for c in test.comparisons
    )  # `e.errno == 111`, not `e.attempts >= 5` (a count the error carries)
    return sorts and isinstance(caught, cst.Name) and bool(read) and read <= {caught.value}


def _literal(expr: cst.BaseExpression) -> bool:
    if isinstance(expr, (cst.Tuple, cst.List, cst.Set)):
        return all(_literal(e.value) for e in expr.elements)
    return isinstance(expr, (cst.Integer, cst.SimpleString))


def _reads(expr: cst.BaseExpression, names: set[str]) -> bool:
    return any(isinstance(n, cst.Name) and n.value in names for n in expr_nodes(expr))


def either_branch_leaves(node: cst.If, model: ModuleModel | None = None) -> bool:
    """`if attempts < limit: sleep() else: raise` bounds the loop as well as `if ...: raise`; with
    the module's model, so does a branch that ends by calling a function that always raises
    (`if tries >= MAX_ATTEMPTS: rethrow()`)."""

    def leaves(block: list[cst.CSTNode]) -> bool:
        return always_leaves(block) if model is None else leaves_or_raises(model, block)

    if leaves(list(node.body.body)):
        return True
    other = node.orelse
    if other is None:
        return False
    return leaves([other] if isinstance(other, cst.If) else list(other.body.body))


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
        if is_task_retry(node, model) or isinstance(node, cst.Continue) and retrying_loop
    ]


def _sorted_before(model: ModuleModel, handler: cst.ExceptHandler, node: cst.CSTNode) -> cst.BaseExpression | None:
    """The test on what the handler caught that lets `node` run only for some of it: an `if`
    whose branch holds it, or an earlier `if` whose body leaves (`if not is_transient(exc):
    raise`). A test that only leaves named classes out (`if isinstance(exc, KeyError): return`,
    or the `else:` of one) lets every other through, and sorts nothing."""
    read = _caught_names(handler)
    child = node
    for ancestor in model.ancestors(node):
        if ancestor is handler:
            return None
        if isinstance(ancestor, cst.If) and child is not ancestor.test and _sorts(model, ancestor.test, read):
            classes = _names_classes(model, ancestor.test)
            if classes is None or classes == (child is ancestor.body):
                return ancestor.test  # in the body of a test, or the `else:` of a negated class test
        if isinstance(ancestor, cst.IndentedBlock):
            for previous in ancestor.body:
                if previous is child:
                    break
                if (
                    isinstance(previous, cst.If)
                    and _sorts(model, previous.test, read)
                    and always_leaves(list(previous.body.body))
                    and _names_classes(model, previous.test) is not True
                ):
                    return previous.test  # `if not is_transient(exc): raise`, then the retry
        child = ancestor
    return None


def _sorts(model: ModuleModel, test: cst.BaseExpression, read: set[str]) -> bool:
    """A test that reads what was caught for more than being there (`exc is not None`)."""
    if not _reads(test, read):
        return False
    return not (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and model.dotted(test.comparisons[0].comparator) == "None"
    )


def _names_classes(model: ModuleModel, test: cst.BaseExpression) -> bool | None:
    """True for a test that holds for named classes (`isinstance(exc, KeyError)`), False for its
    negation (`not isinstance(...)`), None for any other test (a classifier's answer)."""
    negated = isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not)
    inner = test.expression if negated else test  # type: ignore[attr-defined]
    if isinstance(inner, cst.Call) and model.dotted(inner.func) == "isinstance":
        return not negated
    return None


def _may_pass_a_timeout(model: ModuleModel, test: cst.BaseExpression) -> bool:
    """A test of the caught exception's class lets a timeout through only if it names one, or a
    base class of one; a negated one, one of classes it cannot name (`isinstance(exc,
    RETRYABLE)`), or a test of anything else (a classifier's answer, a status) may."""
    checks = [
        node
        for node in expr_nodes(test)
        if isinstance(node, cst.Call) and model.dotted(node.func) == "isinstance" and len(node.args) == 2
    ]
    if not checks or any(isinstance(n, cst.UnaryOperation) for n in expr_nodes(test)):
        return True
    named: list[cst.BaseExpression] = []
    for check in checks:
        classes = check.args[1].value
        if isinstance(classes, cst.Tuple):
            if any(isinstance(e, cst.StarredElement) for e in classes.elements):
                return True  # `isinstance(exc, (*TRANSIENT, KeyError))`: not all named here
            named += [e.value for e in classes.elements]
        else:
            named.append(classes)
    for expr in named:
        name = model.qualname(expr)
        held = model.resolve(model.scope_of(expr), expr.value) if isinstance(expr, cst.Name) else []
        if name is None or any(b.kind not in ("import", "def") for b in held):
            return True  # a class computed or held in a name (`RETRYABLE = (Timeout, ...)`)
        if name in TIMEOUT_EXCEPTIONS | TIMEOUT_BASES:
            return True
    return False
