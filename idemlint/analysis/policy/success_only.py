"""Retry loops that leave on a success and go round on every other answer: a request the
server rejected (400, 401, 403, 404, 422) is sent again, though a retry cannot fix it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.request_parts import repeat_safe_endpoint
from idemlint.analysis.retry import RetryContext, always_leaves
from idemlint.knowledge.http import WRITE_METHOD_FUNCTIONS
from idemlint.knowledge.retries import is_attempt_counter

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def retries_every_failure(model: ModuleModel, context: RetryContext, nodes: list[cst.CSTNode]) -> cst.If | None:
    """`for attempt in range(n): r = session.post(...); if r.status_code == 200: break;
    sleep(...)`: the branch that leaves on a success, where the loop sends a write and tests
    no other status, lets no status error out (`raise_for_status()`), and goes round on an
    answer only (not a poll: a read may wait for a 404 to turn into a 200)."""
    if context.kind != "loop" or context.refused_only:
        return None
    handled = {id(n) for h in nodes if isinstance(h, cst.ExceptHandler) for n in model.iter_nodes(h)}
    calls = [n for n in nodes if isinstance(n, cst.Call) and id(n) not in handled]
    writes = [
        c
        for c in calls
        if (model.call_name(c) or "").rsplit(".", 1)[-1] in WRITE_METHOD_FUNCTIONS
        and not repeat_safe_endpoint(model, c)  # a POST that only reads (`/_search`)
    ]
    if not writes or any((model.call_name(c) or "").endswith("raise_for_status") for c in calls):
        return None
    tests = [n for n in nodes if isinstance(n, cst.If) and id(n) not in handled and _names_a_status(model, n.test)]
    if len(tests) != 1 or not always_leaves(list(tests[0].body.body)) or not _success_only(model, tests[0].test):
        return None
    success = tests[0]
    if not _tests_the_answer(model, success.test, writes, nodes):
        return None  # a test on another answer (`if ready.ok:` before the write)
    if success.orelse is not None:
        return None  # `else: raise ApiError(...)`: the other answers are judged there
    block = model.parents.get(success)
    after = list(block.body)[list(block.body).index(success) + 1 :] if isinstance(block, cst.IndentedBlock) else []
    if always_leaves(after):
        return None  # `raise RuntimeError(status)` next: it ends there
    loop = context.node
    counters = model.names_read(loop.target) if isinstance(loop, cst.For) else set()
    for branch in nodes:
        if (
            isinstance(branch, cst.If)
            and branch is not success
            and id(branch) not in handled
            and always_leaves(list(branch.body.body))
            and not all(is_attempt_counter(name) or name in counters for name in model.names_read(branch.test))
        ):
            return None  # `if error["type"] in PERMANENT: raise`: the answers are sorted another way
    return success


def _tests_the_answer(
    model: ModuleModel, test: cst.BaseExpression, writes: list[cst.Call], nodes: list[cst.CSTNode]
) -> bool:
    """The test reads what a write of the loop answered: through names (`r = post(...)`) or an
    attribute the loop sets to it (`self.response = self.session.post(...)`)."""
    answers = {id(n) for n in origin_nodes(model, test)}
    if any(id(write) in answers for write in writes):
        return True
    sent = {id(w) for w in writes}
    held = {
        model.dotted(target.target)
        for node in nodes
        if isinstance(node, cst.Assign) and isinstance(node.value, cst.Call) and id(node.value) in sent
        for target in node.targets
        if isinstance(target.target, cst.Attribute)
    }
    return any(isinstance(n, cst.Attribute) and model.dotted(n) in held for n in model.iter_nodes(test))


def _names_a_status(model: ModuleModel, test: cst.BaseExpression) -> bool:
    return any(
        isinstance(n, (cst.Name, cst.Attribute)) and _STATUS_WORDS & set((model.dotted(n) or "").lower().split("."))
        for n in (test, *model.iter_nodes(test))
    )


_STATUS_WORDS = frozenset({"status_code", "status", "ok", "is_success"})


def _success_only(model: ModuleModel, test: cst.BaseExpression) -> bool:
    """`r.status_code == 200`, `r.status in (200, 201)`, `200 <= r.status < 300`, `r.ok`."""
    if isinstance(test, cst.Attribute):
        return test.attr.value in ("ok", "is_success")
    if not isinstance(test, cst.Comparison):
        return False
    codes: list[cst.BaseExpression] = [test.left] if isinstance(test.left, cst.Integer) else []
    for target in test.comparisons:
        if isinstance(target.operator, cst.In) and isinstance(target.comparator, (cst.Tuple, cst.List, cst.Set)):
            codes += [e.value for e in target.comparator.elements]
        elif isinstance(target.operator, (cst.Equal, cst.LessThan, cst.LessThanEqual)):
            codes.append(target.comparator)
        else:
            return False
    bounds = [t.comparator for t in test.comparisons if isinstance(t.operator, cst.LessThan)]
    numbers = [c.evaluated_value - (c in bounds) for c in codes if isinstance(c, cst.Integer)]
    return bool(numbers) and all(200 <= n <= 299 for n in numbers) and _names_a_status(model, test)
