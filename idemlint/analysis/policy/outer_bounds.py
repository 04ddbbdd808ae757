"""What bounds a retry loop from outside its own test: a deadline context around it, or a test
that lets it go round only while an attempt it counts allows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.policy.common import expr_nodes, is_none, tests_only_a_status
from idemlint.analysis.retry.answers import TRANSIENT_STATUS
from idemlint.analysis.retry.counters import counted_down
from idemlint.analysis.retry.exits import guarded_continue
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.retries import DEADLINE_CONTEXTS, DECISION_CALL

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def under_a_deadline(model: ModuleModel, loop: cst.For | cst.While, nodes: list[cst.CSTNode]) -> bool:
    """The loop runs, in the same function, inside a `with` that cancels it when time runs out
    (`async with asyncio.timeout(t):`, `async_timeout.timeout(t)`, anyio's `fail_after(t)`; not
    `timeout(None)`), awaits inside (a blocking loop is never cancelled), and swallows no
    cancellation (`except BaseException`, `except CancelledError`, a bare `except`)."""
    if not any(isinstance(n, cst.Await) for n in nodes) or any(_swallows_cancellation(model, n) for n in nodes):
        return False
    for ancestor in model.ancestors(loop):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                call = item.item
                if (
                    isinstance(call, cst.Call)
                    and model.call_name(call) in DEADLINE_CONTEXTS
                    and not (call.args and is_none(call.args[0].value))
                ):
                    return True
    return False


def _swallows_cancellation(model: ModuleModel, node: cst.CSTNode) -> bool:
    if not isinstance(node, cst.ExceptHandler):
        return False
    if node.type is None:
        return True
    caught = caught_classes(node.type)
    return any((model.dotted(c) or "").rsplit(".", 1)[-1] in ("BaseException", "CancelledError") for c in caught)


def goes_round_only_when_counted(
    model: ModuleModel, loop: cst.For | cst.While, nodes: list[cst.CSTNode], counters: frozenset[str]
) -> bool:
    """`while True: ...; retry = policy.should_retry(attempt=n); if retry: sleep(...); continue`,
    then `break` or `return`: the loop goes round only through tests computed from an attempt
    it counts (`n += 1`, `retries -= 1`), so the test (a retry policy's method, often) owns the
    bound. A test on anything else (`if resp.status == 503: continue`) bounds nothing. A pass
    held in one `with` block is read inside it."""
    body = list(loop.body.body)
    while len(body) == 1 and isinstance(body[0], cst.With):  # `async with session.get(url) as r:` holds the pass
        body = list(body[0].body.body)
    counted = set(counters) - _reset_each_pass(nodes)
    growing = _only_grows(model, nodes)
    if not counted or not guarded_continue(body):
        return False
    assigns = [n for n in nodes if isinstance(n, cst.Assign)]
    for _round in range(3):  # a decision computed from a counter: `retry = policy.should_retry(attempt=n)`
        for assign in assigns:
            if _decides_on(model, assign.value, counted):
                counted.update(t.target.value for t in assign.targets if isinstance(t.target, cst.Name))
    continues = [n for n in nodes if isinstance(n, cst.Continue)]
    guards = [s for s in body if isinstance(s, cst.If) and any(model.is_inside(c, s.body) for c in continues)]
    return (
        bool(guards)
        and all(any(model.is_inside(c, g.body) for g in guards) for c in continues)
        and all(_decides_on(model, g.test, counted, growing) for g in guards)
    )


def _only_grows(model: ModuleModel, nodes: list[cst.CSTNode]) -> set[str]:
    """Counts stepped up (`attempts += 1`) and compared with nothing in the loop: tested for
    truth (`if attempts: continue`), such a count is never spent, so it bounds nothing."""
    up = {
        n.target.value
        for n in nodes
        if isinstance(n, cst.AugAssign) and isinstance(n.operator, cst.AddAssign) and isinstance(n.target, cst.Name)
    }
    compared = {
        x.value for n in nodes if isinstance(n, cst.Comparison) for x in model.iter_nodes(n) if isinstance(x, cst.Name)
    }
    return up - compared


def _reset_each_pass(nodes: list[cst.CSTNode]) -> set[str]:
    """`attempt = 0` inside the loop: a count that starts again every pass bounds nothing."""
    return {
        t.target.value
        for n in nodes
        if isinstance(n, cst.Assign) and isinstance(n.value, cst.Integer)
        for t in n.targets
        if isinstance(t.target, cst.Name)
    }


def _decides_on(
    model: ModuleModel, expr: cst.BaseExpression, counted: set[str], growing: frozenset[str] | set[str] = frozenset()
) -> bool:
    """A test or value that decides by a counted attempt: a counted name itself (`if retry:`),
    a comparison that reads one (`n < limit`), or a call named for the decision that is handed
    one as it is (`policy.should_retry(resp, attempt=n)`; not `get(url, timeout=5 * n)`)."""
    if isinstance(expr, cst.Name):
        return expr.value in counted and expr.value not in growing
    if isinstance(expr, cst.UnaryOperation):
        return _decides_on(model, expr.expression, counted, growing)
    if isinstance(
        expr, cst.BooleanOperation
    ):  # `status == 429 and retries` needs the count; `or` goes round without it
        sides = (_decides_on(model, expr.left, counted, growing), _decides_on(model, expr.right, counted, growing))
        return any(sides) if isinstance(expr.operator, cst.And) else all(sides)
    if isinstance(expr, cst.Comparison):
        return any(isinstance(n, cst.Name) and n.value in counted for n in expr_nodes(expr))
    if isinstance(expr, cst.Call):
        name = (model.call_name(expr) or model.dotted(expr.func) or "").rsplit(".", 1)[-1]
        return bool(DECISION_CALL.search(name)) and any(
            isinstance(a.value, cst.Name) and a.value.value in counted for a in expr.args
        )
    return False


def passed_every_round(loop: cst.For | cst.While, nodes: list[cst.CSTNode]) -> bool:
    """A bound every way round passes: a comparison or a count spent in the loop test, or a
    handler whose own test decides each retry (`except X: if retry.allowed(): continue; raise`),
    unless that test reads only the answer's status (`if exc.status == 401: continue`)."""
    return (
        isinstance(loop, cst.While)
        and (not _is_constant_true(loop.test) and _compares_more_than_a_status(loop.test) or counted_down(loop, nodes))
    ) or any(
        isinstance(node, (cst.Try, cst.TryStar))
        and any(guarded_continue(h.body.body) and not _guarded_by_a_status(h) for h in node.handlers)
        for node in nodes
    )


def _guarded_by_a_status(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """Every test in the handler that goes round reads only the answer's status."""
    guards = [s for s in handler.body.body if isinstance(s, cst.If)]
    return bool(guards) and all(tests_only_a_status(g.test) for g in guards)


def _compares_more_than_a_status(test: cst.BaseExpression) -> bool:
    """A comparison in the loop test, unless the test is only a failing status code: `while
    r.status_code >= 500:` (`!= 200`, `== 503`) goes round as long as the service fails, which
    bounds nothing. `== 202` (a poll that ends with the job), `and left`, `and not
    deadline.expired()` are read as before."""
    if isinstance(test, cst.Comparison) and any(
        isinstance(x, cst.Attribute) and x.attr.value == "status_code" for x in expr_nodes(test.left)
    ):
        failing = [
            c
            for c in test.comparisons
            if not isinstance(c.operator, (cst.Equal, cst.In))
            or isinstance(c.comparator, cst.Integer)
            and TRANSIENT_STATUS.match(c.comparator.value)
        ]
        if failing:
            return False
    return any(isinstance(n, cst.Comparison) for n in expr_nodes(test))


def _is_constant_true(test: cst.BaseExpression) -> bool:
    return isinstance(test, cst.Name) and test.value == "True" or isinstance(test, cst.Integer) and test.value != "0"
