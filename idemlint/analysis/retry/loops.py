"""Which loops re-attempt the same work.

A loop counts as a retry loop only with evidence of re-attempting: it iterates over a
counter (`range`, `itertools.count`) or is a `while` loop, and either catches an exception
without leaving the loop while a success leaves it, or sleeps between attempts under an
attempt counter. Loops over collections (per-item work), consumer loops that never leave on
success, and polling loops without an attempt counter are not retry contexts; a `while True`
loop that waits for a remote job's status is a "poll".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.retry.answers import (
    denies_done,
    goes_round_after_success,
    goes_round_on_a_failed_answer,
    names_a_state,
    only_waits,
    says_failure,
    tests_a_failed_answer,
    tries_each_once,
    unwrap_await,
    works_on_next_item,
)
from idemlint.analysis.retry.context import RetryContext
from idemlint.analysis.retry.counters import (
    attempt_counters,
    gives_up_on_last_attempt,
    spends_an_attempt_flag,
    stepped_names,
    steps,
)
from idemlint.analysis.retry.exits import (
    always_leaves,
    answers_bound,
    ends_by_leaving,
    ends_by_raising,
    ends_by_returning,
    ends_with_continue,
    guarded_continue,
    leaves_after,
    leaves_loop,
    loop_nodes,
    runs_once,
    tests_leaving_every_loop,
)
from idemlint.analysis.retry.not_ready import goes_round_on_failure, means_not_ready, waits_for_messages
from idemlint.analysis.retry.not_retries import (
    checks_readiness,
    follows_what_each_failure_names,
    restarts_a_service,
    tries_next_candidate,
)
from idemlint.analysis.retry.reach import in_unreachable_handler
from idemlint.analysis.retry.read_only import (
    only_looks_up,
    polls_accepted_work,
    polls_by_reading,
    raises_until_ready,
    waits_for_a_record,
)
from idemlint.analysis.retry.safe_repeats import gated_on_idempotency, goes_round_only_when_refused
from idemlint.analysis.retry.sends import sends_a_write_among
from idemlint.analysis.syntax import conjuncts, disjuncts
from idemlint.knowledge.retries import (
    NEXT_ITEM_CALLS,
    NOT_READY_STATES,
    RETRY_ITERATORS,
    SLEEPS,
    is_attempt_counter,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

COUNTERS = {"range", "itertools.count", "xrange"}


def classify_loop(model: ModuleModel, loop: cst.For | cst.While) -> RetryContext | None:
    if isinstance(loop, cst.For):
        iterator = unwrap_await(loop.iter)
        call = iterator if isinstance(iterator, cst.Call) else _bound_call(model, iterator)
        name = model.qualname(call.func) if call is not None else None
        if name in RETRY_ITERATORS and call is not None:
            polls = raises_until_ready(model, loop) and only_looks_up(model, loop)  # raises "not yet" after a read
            kind = "poll" if polls else "iterator"
            return RetryContext(kind, RETRY_ITERATORS[name], loop, loop, call, f"{name}(...) loop")
        if name not in COUNTERS:
            return None
        counter_names = [n.value for n in model.iter_nodes(loop.target) if isinstance(n, cst.Name)]
        if isinstance(loop.target, cst.Name):
            counter_names.append(loop.target.value)
    else:
        counter_names = [n.value for n in model.iter_nodes(loop.test) if isinstance(n, cst.Name)]
        if isinstance(loop.test, cst.Name):
            counter_names.append(loop.test.value)
    counter_names = counter_names + attempt_counters(model, loop)
    if restarts_a_service(model, loop):
        return None  # `while True: try: while not stopping: serve() ... except: log; sleep`: a supervisor
    if waits_for_messages(model, loop):
        return None  # `msg = sub.get_message(timeout=1.0)` round and round: a consumer, not a retry
    if runs_once(model, loop):
        return None  # every pass ends by leaving: the first failure ends the loop
    if any(isinstance(n, (cst.Try, cst.TryStar)) and tries_each_once(model, loop, n) for n in loop_nodes(model, loop)):
        return None  # `if url in tried: break; tried.add(url); try: connect(url)`: a failover
    if follows_what_each_failure_names(model, loop):
        return None  # `except Moved as m: url = m.location`: a redirect followed
    if checks_readiness(model, loop) or polls_accepted_work(model, loop):
        return RetryContext("poll", "loop", loop, loop, None, "polling loop")
    catches = _catches_and_reattempts(model, loop, counter_names)
    if catches or _sleeps_between_attempts(model, loop, counter_names):
        rides_out = polls_by_reading(model, loop, counter_names) or waits_for_a_record(model, loop)
        if (not catches or rides_out) and _waits_for_readiness(model, loop, counter_names, rides_out):
            return RetryContext("poll", "loop", loop, loop, None, "polling loop")
        refused = goes_round_only_when_refused(model, loop)
        gated = gated_on_idempotency(model, loop)
        return RetryContext("loop", "loop", loop, loop, None, "retry loop", refused_only=refused, idempotent_only=gated)
    if isinstance(loop, cst.While) and goes_round_on_a_failed_answer(model, loop):
        return RetryContext("loop", "loop", loop, loop, None, "retry loop")
    if isinstance(loop, cst.While) and _polls_remote_status(model, loop):
        return RetryContext("poll", "loop", loop, loop, None, "polling loop")
    return None


def _waits_for_readiness(
    model: ModuleModel, loop: cst.For | cst.While, counter_names: Sequence[str], rides_out: bool
) -> bool:
    """A counted loop that sleeps and leaves when an answer says "ready" (`if body["done"]:`,
    `if observed == expected:`, `if build.state in FINAL:`), and whose tests say nothing of
    a failure: a poll. What makes a retry go round is the failure of its work, so a test on a
    status code, `ok`, or a retryable flag anywhere in the loop keeps it a retry, and so does
    an exception handler that goes round again, unless the loop only reads: a poll that rides
    out a failed read (`except RequestException: sleep(POLL_INTERVAL); continue`) keeps its
    cadence, and what it repeats is a read (`rides_out`: `polls_by_reading` said so), as does one
    waiting for a record to appear (`waits_for_a_record`)."""
    counters = set(counter_names)
    nodes = loop_nodes(model, loop)
    # In a loop that only reads, a failure test that raises (`if r.status_code != 200: raise`)
    # ends it on a bad answer rather than sending it round, and `if row["pending"]: sleep();
    # continue` then `return row` leaves once the answer says ready. A loop that sends a write
    # each pass re-sends it: a retry whatever it tests.
    reads_only = not sends_a_write_among(model, nodes)
    if not rides_out and any(isinstance(n, (cst.Try, cst.TryStar)) and goes_round_on_failure(model, n) for n in nodes):
        return False  # an exception from the work sends it round again: failure-driven
    tests = [n.test for n in nodes if isinstance(n, cst.If) and not (reads_only and ends_by_raising(n.body.body))]
    if isinstance(loop, cst.While):
        tests.append(loop.test)
    stepped = stepped_names(nodes)
    if isinstance(loop, cst.For):  # `for retry in range(4):` ... `if retry == 3:` tests the count
        stepped |= {n.value for n in (loop.target, *model.iter_nodes(loop.target)) if isinstance(n, cst.Name)}
    bound_here = _bound_other_than_by_a_step(model, loop)
    if any(
        says_failure(model, part)
        for test in tests
        for whole in conjuncts(test)  # `while not ready and retry:`: the count is no answer
        for part in disjuncts(whole)  # `if resp.status < 500 or attempt == 4:`: the status is one
        if not _only_counts(model.names_read(part), stepped, bound_here)
    ):
        return False
    # `for volume in volumes: if volume["name"] == name: return True`: in a loop that only reads
    # (its inner loops too), an inner loop over the answer returns once it shows what is awaited
    found = (
        [
            n
            for n in tests_leaving_every_loop(model, loop)
            if ends_by_returning(n.body.body) and not says_failure(model, n.test)
        ]
        if reads_only and not sends_a_write_among(model, model.iter_nodes(loop.body))
        else []
    )
    exits = [
        n
        for n in [*nodes, *found]
        if isinstance(n, cst.If)
        and (leaves_loop(model, n.body) or reads_only and _waits_while_not_ready(model, n, loop))
        and not model.names_read(n.test) <= counters
    ]
    # `while instance.status != wanted and retry:` round `instance = nova.get(id)`: the loop's own
    # test leaves once the answer it reads again says so. Not a loop that writes (it re-sends its
    # write), nor one whose handler goes round on a failure (`while body is None:` round `try:
    # body = get(url).json()` retries the read), nor a count (`attempt = attempt + 1`)
    fetched = answers_bound(nodes)
    answered = (
        isinstance(loop, cst.While)
        and reads_only
        and not any(isinstance(n, (cst.Try, cst.TryStar)) and goes_round_on_failure(model, n) for n in nodes)
        and any(model.names_read(part) & fetched - stepped for part in conjuncts(loop.test))
    )
    return bool(exits) or answered or rides_out and waits_for_a_record(model, loop)


def _bound_other_than_by_a_step(model: ModuleModel, loop: cst.For | cst.While) -> set[str]:
    """The names the loop's body binds (`=`, `with ... as`, `:=`, an inner `for`), but not those
    it only steps (`attempt += 1`, `retryCount = retryCount + 1`)."""
    scope = model.scope_of(loop)
    return {
        name
        for name in model.bound_inside(loop.body)
        if any(
            model.is_inside(b.statement, loop.body) and not _a_step(b.statement) for b in model.bindings_of(scope, name)
        )
    }


def _a_step(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.AugAssign) or steps(statement) is not None


def _only_counts(names: set[str], stepped: set[str], bound_here: set[str]) -> bool:
    """A test on the loop's own count (`if retry > 0:` with `retry += 1` in the loop, against a
    setting), not on an answer: `retry = status >= 500` in the loop makes `retry` one."""
    return bool(names & stepped) and not names & bound_here


def _waits_while_not_ready(model: ModuleModel, branch: cst.If, loop: cst.For | cst.While) -> bool:
    """`if row["pending"] == 1: sleep(2); continue` followed by (or with an `else:` that does)
    a return or break: the loop leaves once the answer stops saying "not yet". The last
    statement of the loop goes round without a `continue` (`if status == "processing":
    sleep(1)` then `else: return result`)."""
    last = loop.body.body[-1] if isinstance(loop.body, cst.IndentedBlock) and loop.body.body else None
    if not ends_with_continue(branch.body.body) and not (branch is last and not always_leaves(branch.body.body)):
        return False
    if not (leaves_after(model, branch) or branch.orelse is not None and leaves_loop(model, branch.orelse)):
        return False
    return names_a_state(model, branch.test, NOT_READY_STATES) or denies_done(model, branch.test)


def _polls_remote_status(model: ModuleModel, loop: cst.While) -> bool:
    """`while True: s = client.get_status(id); if s == READY: break; ...; sleep(n)`: a loop that
    waits for a remote job. Not a retry: nothing is re-attempted, and no retry rule judges it."""
    test = loop.test
    if not (isinstance(test, cst.Name) and test.value == "True" or isinstance(test, cst.Integer) and test.value != "0"):
        return False
    nodes = loop_nodes(model, loop)
    if not any(isinstance(n, cst.Call) and model.qualname(n.func) in SLEEPS for n in nodes):
        return False
    if any(isinstance(n, (cst.Try, cst.TryStar)) for n in nodes):
        return False
    # the value polled: a name bound in the loop from a call on a client-like receiver
    polled = set()
    for n in nodes:
        if isinstance(n, cst.Assign) and isinstance(n.value, (cst.Call, cst.Await)):
            call = n.value.expression if isinstance(n.value, cst.Await) else n.value
            if not isinstance(call, cst.Call):
                continue
            last = (model.dotted(call.func) or "").rsplit(".", 1)[-1]
            if last in NEXT_ITEM_CALLS or not re.search(r"status|state|result|job|task|progress", last, re.I):
                continue
            for t in n.targets:
                if isinstance(t.target, cst.Name):
                    polled.add(t.target.value)
    if not polled:
        return False
    # leaves when a comparison on the polled value holds
    for n in nodes:
        if isinstance(n, cst.If) and isinstance(n.test, cst.Comparison):
            names = {x.value for x in model.iter_nodes(n.test) if isinstance(x, cst.Name)}
            if isinstance(n.test.left, cst.Name):
                names.add(n.test.left.value)
            if names & polled and leaves_loop(model, n.body):
                return True
    return False


def _catches_and_reattempts(model: ModuleModel, loop: cst.For | cst.While, counter_names: Sequence[str] = ()) -> bool:
    """A try in the loop whose failure stays in the loop and whose success leaves it."""
    for try_node in loop_nodes(model, loop):
        if not isinstance(try_node, (cst.Try, cst.TryStar)):
            continue
        calls = [n for n in model.iter_nodes(try_node.body) if isinstance(n, cst.Call)]
        if not calls or all(only_waits(model, c) for c in calls):
            continue  # nothing attempted, or only a wait: its timeout is the interval passing, not a failure
        if works_on_next_item(model, loop, try_node) or tries_next_candidate(model, loop, try_node):
            continue  # each round takes a new item: a failure moves on, whichever way it goes round
        if any(
            guarded_continue(h.body.body) and not means_not_ready(model, h) for h in try_node.handlers
        ) and leaves_loop(model, loop.body):
            return True  # `except X: if retry.allowed(): continue; raise`, and a way out on success
        if not goes_round_on_failure(model, try_node):
            continue
        if goes_round_after_success(model, try_node, loop):
            continue  # a periodic loop: a success waits for the next round too
        # Success must leave for sure; a conditional exit is a per-item or polling loop
        # (result-checking retries are recognised by their counter and sleep instead).
        success = [try_node.body]  # IndentedBlock; an `else:` holds one too
        if try_node.orelse is not None:
            success.append(try_node.orelse.body)
        if any(ends_by_leaving(list(block.body)) for block in success):
            return True
        # `except X: sleep(); continue` then `return result`: only failures go round again.
        # When the handler falls through to the same exit, failures leave too: no retry.
        if any(ends_with_continue(h.body.body) for h in try_node.handlers) and leaves_after(model, try_node):
            return True
        if isinstance(loop, cst.While) and _sets_loop_flag(model, try_node.body, loop):
            return True
        # `if ok: break` in the try, and a give-up on the last attempt (or a flag spent once)
        if leaves_loop(model, try_node.body) and (
            gives_up_on_last_attempt(model, loop, counter_names) or spends_an_attempt_flag(model, loop)
        ):
            return True
    return False


def _sleeps_between_attempts(model: ModuleModel, loop: cst.For | cst.While, counter_names: list[str]) -> bool:
    """Result-checking retry: an attempt counter, a sleep, and a way out on success (not only
    in a handler)."""
    if not any(is_attempt_counter(name) for name in counter_names):
        return False
    has_sleep = any(
        isinstance(n, cst.Call) and model.qualname(n.func) in SLEEPS and not in_unreachable_handler(model, n, loop)
        for n in loop_nodes(model, loop)
    )
    if not has_sleep and not (isinstance(loop, cst.For) and gives_up_on_last_attempt(model, loop, counter_names)):
        return False
    if isinstance(loop, cst.While) and _goes_round_until_it_works(model, loop, set(counter_names)):
        return True  # `while not response.ok and retry:` leaves by its test once the work goes through
    return _leaves_on_success(model, loop.body)


def _goes_round_until_it_works(model: ModuleModel, loop: cst.While, counter_names: set[str]) -> bool:
    """A part of the loop's `and` test that goes round while the work has not gone through: a
    failed answer (`not response.ok`, `r.status_code >= 500`), or the denial of a name the loop
    binds from its work (`status != 200`, `result is None`, `not delivered`; not a count,
    `attempt = attempt + 1`; `not delivered` and `result is None` only where the loop sends a
    write). Not `while ok and ...`, which goes round while it works, nor a poll's "not yet" (`not
    ready`, `state != wanted`, `not deleted` read from a GET's answer)."""
    nodes = loop_nodes(model, loop)
    stepped = stepped_names(nodes)
    counters = stepped | {c for c in counter_names if is_attempt_counter(c)}
    bound = {  # not a count that builds on itself, `attempt = attempt + 1`
        t.target.value
        for n in nodes
        if isinstance(n, cst.Assign)
        for t in n.targets
        if isinstance(t.target, cst.Name) and t.target.value not in model.names_read(n.value)
    } - counters
    writes = sends_a_write_among(model, nodes)
    for part in conjuncts(loop.test):
        if tests_a_failed_answer(model, part, counters):
            return True
        denied: cst.BaseExpression | None = None
        if isinstance(part, cst.UnaryOperation) and isinstance(part.operator, cst.Not):
            if writes and not denies_done(model, part):  # a read awaited is a poll's "not yet"
                denied = part.expression
        elif isinstance(part, cst.Comparison) and len(part.comparisons) == 1:
            comparison = part.comparisons[0]
            is_none = isinstance(comparison.comparator, cst.Name) and comparison.comparator.value == "None"
            a_code = isinstance(comparison.operator, cst.NotEqual) and isinstance(comparison.comparator, cst.Integer)
            if a_code or writes and is_none and isinstance(comparison.operator, (cst.Is, cst.Equal)):
                denied = part.left
        if isinstance(denied, cst.Name) and denied.value in bound:
            return True
    return False


def _leaves_on_success(model: ModuleModel, node: cst.CSTNode) -> bool:
    """A `return` or a `break` of this loop outside every `except` handler: a way out when the
    work went through. One only in a handler (`except Unsupported: return`) leaves on a failure;
    a loop that no success leaves runs on a schedule (a feed updated until stopped)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if (
            isinstance(current, cst.Return)
            or isinstance(current, cst.Break)
            and not _in_inner_loop(model, current, node)
        ):
            return True
        if not isinstance(
            current, (cst.ExceptHandler, cst.ExceptStarHandler, cst.FunctionDef, cst.ClassDef, cst.Lambda)
        ):
            stack.extend(model.children_of(current))
    return False


def _in_inner_loop(model: ModuleModel, node: cst.CSTNode, body: cst.CSTNode) -> bool:
    """In the body of a loop nested in `body` (a `break` in its `else:` leaves the outer one)."""
    return any(
        isinstance(a, (cst.For, cst.While)) and model.is_inside(node, a.body) for a in model.ancestors(node, until=body)
    )


def _bound_call(model: ModuleModel, expr: cst.BaseExpression) -> cst.Call | None:
    """`retryer = Retrying(...); for attempt in retryer:` -> the Retrying call."""
    if not isinstance(expr, cst.Name):
        return None
    for binding in model.bindings_of(model.scope_of(expr), expr.value):
        if isinstance(binding.value, cst.Call):
            return binding.value
    return None


def _sets_loop_flag(model: ModuleModel, block: cst.CSTNode, loop: cst.While) -> bool:
    """`while not done: try: call(); done = True` style success flags, set whenever the work
    succeeds: in the try's own body, or under a test of the work's outcome (`if r.ok:`). Set
    only when an answer says "ready" (`if quote.state == PAID: ...; paid = True`), the loop
    goes round after a success too: a poll."""
    tested = {n.value for n in model.iter_nodes(loop.test) if isinstance(n, cst.Name)}
    if isinstance(loop.test, cst.Name):
        tested.add(loop.test.value)
    for node in model.iter_nodes(block):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value in tested:
                    tests = [a.test for a in model.ancestors(node, until=block) if isinstance(a, cst.If)]
                    if all(says_failure(model, test) for test in tests):
                        return True
    return False
