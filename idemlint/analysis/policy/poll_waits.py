"""Waits in a retry loop that pace a poll: the sleep runs only once the round's attempt has
answered without raising, and what sends the loop round there is the answer's "not yet"
(`stack = heat.get(id)`, `if stack.status == wanted: return stack`, `time.sleep(5)`), or the
loop's own test awaits a state the round reads again (`while image.status != "active":`). A failure
that goes round elsewhere in the loop keeps it a retry, with its other findings; this wait is
the poll's cadence, not a backoff between failed attempts, and no wave of failed clients comes
back at once through it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.retry import SLEEPS
from idemlint.analysis.retry.answers import says_how_it_went
from idemlint.analysis.retry.exits import always_leaves, answers_bound, ends_by_raising, leaves_loop, loop_nodes
from idemlint.analysis.retry.sends import sends_a_write_among
from idemlint.analysis.syntax import conjuncts
from idemlint.analysis.timeouts import LOGGING_CALL

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def paces_a_poll(model: ModuleModel, sleep: cst.Call, loop: cst.For | cst.While) -> bool:
    """In a loop that only reads, the sleep is in a `try`'s body, after the attempt (a call, not
    a wait or a log line) and after a comparison of what the attempt gave with what is awaited
    that leaves the loop (`if status == expected: return stack`), and no test on its way says how
    the work went (a status code, `ok`, an error: a failed answer waited out is a retry's
    backoff). Or, anywhere in the round outside a handler, when the loop's own test awaits the
    state the round reads again."""
    ancestors = list(model.ancestors(sleep, until=loop))
    if any(isinstance(a, (cst.ExceptHandler, cst.ExceptStarHandler, cst.Finally)) for a in ancestors):
        return False
    if _awaited_by_the_loop_test(model, loop):
        return True
    if sends_a_write_among(model, loop_nodes(model, loop)):
        return False  # a round that sends a write re-sends it: a retry's wait
    attempt = next((a for a in ancestors if isinstance(a, (cst.Try, cst.TryStar))), None)
    if attempt is None or not isinstance(attempt.body, cst.IndentedBlock):
        return False
    holder = next((s for s in attempt.body.body if s is sleep or s in ancestors), None)
    if holder is None or any(isinstance(a, (cst.For, cst.While)) for a in ancestors if model.is_inside(a, attempt)):
        return False  # an inner loop's wait
    before = list(attempt.body.body[: attempt.body.body.index(holder)])
    nodes = [n for statement in before for n in (statement, *model.iter_nodes(statement))]
    if not any(isinstance(n, cst.Call) and not _waits_or_logs(model, n) for n in nodes):
        return False  # a wait before the attempt follows the last round, failed or not
    answered = {n.target.value for n in nodes if isinstance(n, cst.AssignTarget) and isinstance(n.target, cst.Name)}
    tests = [n.test for n in nodes if isinstance(n, cst.If)]
    tests += [a.test for a in ancestors if isinstance(a, cst.If) and model.is_inside(a, attempt)]
    if any(says_how_it_went(model, part) for test in tests for part in conjuncts(test)):
        return False
    return any(
        isinstance(statement, cst.If)
        and leaves_loop(model, statement.body)
        and _compares_the_answer(model, statement.test, answered)
        for statement in before
    )


def _awaited_by_the_loop_test(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """`while snapshot.status != "available":` round `snapshot = cloud.get_snapshot(id)`: the
    loop's own test compares what the round reads again with the state awaited, so every wait
    of the round outside a handler paces that poll, before the read or after it. Calls in a
    handler that leaves (`except RuntimeError: cloud.delete(snapshot); raise`) are not part of
    any round; a test on how the work went (a status code, `ok`) that neither raises nor only
    logs makes the loop go round on a failure."""
    if not isinstance(loop, cst.While):
        return False
    leaving = [n for n in loop_nodes(model, loop) if isinstance(n, cst.ExceptHandler) and always_leaves(n.body.body)]
    nodes = [n for n in loop_nodes(model, loop) if not any(model.is_inside(n, h) for h in leaving)]
    fetched = answers_bound(nodes)
    every = [n for n in model.iter_nodes(loop.body) if not any(model.is_inside(n, h) for h in leaving)]
    if not _compares_the_answer(model, loop.test, fetched) or sends_a_write_among(model, every):
        return False  # a write in the round, an inner loop's too, is sent again
    tests = [
        loop.test,
        *(
            n.test
            for n in nodes
            if isinstance(n, cst.If) and not ends_by_raising(n.body.body) and not _only_logs(model, n)
        ),
    ]
    return not any(says_how_it_went(model, part) for test in tests for part in conjuncts(test))


def _only_logs(model: ModuleModel, branch: cst.If) -> bool:
    """`if volume.status != "error": LOG.warning("no status")`: a test that decides only what is
    said, not whether or how the loop goes round."""
    if branch.orelse is not None:
        return False
    statements = [n for n in model.iter_nodes(branch.body) if isinstance(n, cst.BaseSmallStatement)]
    return all(
        isinstance(n, cst.Expr)
        and isinstance(n.value, cst.Call)
        and bool(LOGGING_CALL.match(model.dotted(n.value.func) or ""))
        for n in statements
    )


def _compares_the_answer(model: ModuleModel, test: cst.BaseExpression, answered: set[str]) -> bool:
    """`status == wanted`, `job.state in DONE`: a value the round read compared with the one
    awaited. Not `if response:` or `if body is not None:`, which ask whether the attempt worked."""
    for node in (test, *model.iter_nodes(test)):
        if not isinstance(node, cst.Comparison) or not model.names_read(node) & answered:
            continue
        if all(
            isinstance(c.operator, (cst.Equal, cst.NotEqual, cst.In, cst.NotIn))
            and not (isinstance(c.comparator, cst.Name) and c.comparator.value == "None")
            for c in node.comparisons
        ):
            return True
    return False


def _waits_or_logs(model: ModuleModel, call: cst.Call) -> bool:
    return model.call_name(call) in SLEEPS or bool(LOGGING_CALL.match(model.dotted(call.func) or ""))
