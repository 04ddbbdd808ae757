"""Hand-written retry loops (`for attempt in range(n)`, `while True`; a polling loop is judged by
no rule): what their `except` handlers and status checks retry, how they sleep, what ends them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.scopes import statements_after
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.model import ModuleModel, iter_nodes, string_value
from idemlint.analysis.policy.common import (
    expr_nodes,
    handler_catches_all,
    is_status_test,
    status_error_caught,
    statuses_in,
    tests_only_a_status,
)
from idemlint.analysis.policy.credentials import renews_credentials
from idemlint.analysis.policy.delays import SettingCall, deterministic_delay, fixed_on_every_way, no_setting
from idemlint.analysis.policy.fixes import jitter_sleep
from idemlint.analysis.policy.local_waits import retries_a_local_resource
from idemlint.analysis.policy.lost_races import waits_for_another_writer
from idemlint.analysis.policy.no_wait import immediate_retry, sleeps_inside
from idemlint.analysis.policy.outer_bounds import (
    goes_round_only_when_counted,
    passed_every_round,
    under_a_deadline,
)
from idemlint.analysis.policy.poll_waits import paces_a_poll
from idemlint.analysis.policy.records import Policy, Verdict
from idemlint.analysis.policy.sorting import (
    either_branch_leaves,
    filters_exception,
    sorted_by_marking,
    tests_only_the_caught,
)
from idemlint.analysis.policy.success_only import retries_every_failure
from idemlint.analysis.retry import SLEEPS, RetryContext, always_leaves, loop_nodes
from idemlint.analysis.retry.exits import fails_the_loop_test, leaves_or_raises, tests_leaving_every_loop
from idemlint.analysis.retry.sends import sends_a_write_among
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.http import AUTH_STATUSES, NETWORK_ERRORS, THROTTLE_HEADER, THROTTLE_STATUS
from idemlint.knowledge.retries import (
    CONNECT_CALL,
    LINK_CLASS,
    LINK_RECEIVER,
    SUBSCRIBE_CALL,
    is_attempt_counter,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

# what a test that bounds a loop is named for: a time, or a count of its own attempts reached
# (`self._retry_limit_reached()`, `retries_exhausted`, `too_many_failures`), not a rate limit or
# a quota the server set (`rate_limit_exceeded`, `QuotaExhausted`)
BOUND_WORDS = re.compile(
    r"timeout|deadline|give_?up|expired|max_(attempts|tries|retries)|start_time"
    r"|(?<![a-z])(retry|retries|attempts?|tries)_?(limit|exhausted)|too_many_(attempts|tries|retries|failures|errors)",
    re.I,
)


def read_loop(model: ModuleModel, context: RetryContext, policy: Policy, setting: SettingCall = no_setting) -> None:
    loop = context.node
    assert isinstance(loop, (cst.For, cst.While))
    label = context.label
    nodes = loop_nodes(model, loop)
    # a `while` loop that neither waits, nor talks to the network (a write it sends is talk),
    # nor counts attempts spins on a local condition (a keypress, a non-blocking read): not a
    # retry of a failure
    talks = _waits_or_talks(
        model, [*nodes, *(expr_nodes(loop.test) if isinstance(loop, cst.While) else ())]
    ) or sends_a_write_among(model, nodes)
    spins = isinstance(loop, cst.While) and not talks and not _loop_bounded(model, loop, nodes)
    # a loop that only reconnects (`sock.connect(addr)`, `pubsub.resubscribe()`) keeps a link up:
    # catching every error there is catching connection errors, and it may go on as long as the process
    reconnects = _only_reconnects(model, loop, nodes)
    for node in nodes:
        if (
            isinstance(node, cst.ExceptHandler)
            and not spins
            and not reconnects
            and not always_leaves(list(node.body.body))
            and not filters_exception(node)
            and not sorted_by_marking(model, node)
            and not _inside_handler(model, node, loop)
            and not _guards_a_step(model, node, loop)
            and not _leaves_after(model, node, loop)
            and not fails_the_loop_test(model, node)
        ):
            if handler_catches_all(model, node):
                caught = "" if node.type is None else model.dotted(node.type) or "Exception"
                reraised = reraised_before(model, node)
                kind = "catch-all-rest" if reraised else "catch-all-handler"
                policy.catches_all.append(Verdict(kind, "loop", node, label, caught=caught, owner=reraised))
            elif status_class := status_error_caught(model, node):
                policy.non_retryable_statuses.append(
                    Verdict("status-error-class", "loop", node, label, caught=status_class)
                )
        elif isinstance(node, cst.If):
            statuses = statuses_in(node.test)
            if statuses and _waits_out_a_throttle(node):
                statuses = tuple(s for s in statuses if s != THROTTLE_STATUS)
            if statuses and renews_credentials(model, node, loop):  # `if e.status == 401: TOKEN = None; continue`
                statuses = tuple(s for s in statuses if s not in AUTH_STATUSES)
            if statuses and not leaves_or_raises(model, list(node.body.body)) and is_status_test(model, node.test):
                policy.non_retryable_statuses.append(
                    Verdict("non-retryable-status", "loop", node, label, statuses=statuses)
                )
        elif isinstance(node, cst.Call) and model.call_name(node) in SLEEPS and node.args:
            if (
                deterministic_delay(model, node.args[0].value, setting)
                and not retries_a_local_resource(model, node, loop)
                and not waits_for_another_writer(model, node, loop)
                and not _waits_on_the_way_out(model, node, loop)
                and not paces_a_poll(model, node, loop)
            ):
                fix = jitter_sleep(model, node.args[0].value) if fixed_on_every_way(model, node.args[0].value) else None
                policy.no_jitter.append(Verdict("fixed-wait", "loop", node, label, fix=fix))
    if (success := retries_every_failure(model, context, nodes)) is not None:
        policy.non_retryable_statuses.append(Verdict("every-failure-status", "loop", success, label))
    if context.kind == "loop" and not spins and (handler := immediate_retry(model, loop, nodes)) is not None:
        policy.no_jitter.append(Verdict("no-wait", "loop", handler, label))
    if isinstance(loop, cst.While) and talks and not reconnects:
        if not _loop_bounded(model, loop, nodes):
            policy.unbounded.append(Verdict("no-bound", "loop", loop, label))
        elif not goes_round_only_when_counted(model, loop, nodes, _counters(nodes)) and (
            skip := _bypassed_bound(model, loop, nodes)
        ):
            lines = (("skip", skip[0]), ("bound", skip[1]))
            policy.unbounded.append(Verdict("bypassed-bound", "loop", loop, label, lines=lines))
    if isinstance(loop, cst.For) and (model.call_name(loop.iter) if isinstance(loop.iter, cst.Call) else None) in (
        "itertools.count",
        "count",
    ):
        if not _loop_bounded(model, loop, nodes):
            policy.unbounded.append(Verdict("endless-count", "loop", loop, label))


def _waits_on_the_way_out(model: ModuleModel, sleep: cst.Call, loop: cst.For | cst.While) -> bool:
    """The statement right after the sleep leaves the loop with nothing more to try (`else:
    time.sleep(1); break` after a success, to let it settle; a `return` of a plain value): it
    waits once the attempts are over, not between them."""
    if any(isinstance(a, (cst.For, cst.While)) for a in model.ancestors(sleep, until=loop)):
        return False
    small = model.statement_of(sleep)
    holder = model.parents.get(small)
    if not isinstance(holder, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return False
    smalls: list[cst.CSTNode] = list(holder.body)
    after = smalls[smalls.index(small) + 1 :] if small in smalls else []
    if not after:
        rest = statements_after(model, holder) or []
        after = list(rest[0].body) if rest and isinstance(rest[0], cst.SimpleStatementLine) else []
    return bool(after) and _leaves_with_nothing_tried(model, after[0])


def _leaves_with_nothing_tried(model: ModuleModel, statement: cst.CSTNode) -> bool:
    """`break`, or a `return` whose value calls nothing (not `return session.get(...)`)."""
    if isinstance(statement, cst.Break):
        return True
    return isinstance(statement, cst.Return) and (
        statement.value is None
        or not any(isinstance(n, cst.Call) for n in (statement.value, *model.iter_nodes(statement.value)))
    )


def _only_reconnects(model: ModuleModel, loop: cst.For | cst.While, nodes: list[cst.CSTNode]) -> bool:
    """Every call the loop attempts (outside its handlers, past sleeps and logging) opens a
    connection (`sock.connect(addr)`) or a subscription on a link (`pubsub.resubscribe()`,
    `self.unsubscribe()` in a `Subscription` class), and there is one."""
    attempted = [
        node
        for node in nodes
        if isinstance(node, cst.Call)
        and not _inside_handler(model, node, loop)
        and not _waits_or_logs(model, node)
        and (model.call_name(node) or "").rsplit(".", 1)[-1] not in ("format", "str", "len")
    ]
    return bool(attempted) and all(_opens_a_link(model, call) for call in attempted)


def _waits_out_a_throttle(branch: cst.If) -> bool:
    """`if r.status_code == 403: reset = r.headers["X-RateLimit-Reset"] ...`: the branch reads
    when the client may come back from the response's headers, so its 403 is a throttle
    (GitHub's), not a refusal a retry cannot fix. Other statuses it tests stay reported."""
    for node in iter_nodes(branch.body):
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value == "get":
            headers, keys = node.func.value, [a.value for a in node.args[:1]]  # `r.headers.get("Retry-After")`
        elif isinstance(node, cst.Subscript):
            headers = node.value  # `r.headers["X-RateLimit-Reset"]`
            keys = [e.slice.value for e in node.slice if isinstance(e.slice, cst.Index)]
        else:
            continue
        if isinstance(headers, cst.Attribute) and headers.attr.value == "headers":
            if any(THROTTLE_HEADER.match(string_value(key) or "") for key in keys):
                return True
    return False


def _opens_a_link(model: ModuleModel, call: cst.Call) -> bool:
    name = model.dotted(call.func) or model.call_name(call) or ""
    receiver, _, last = name.rpartition(".")
    if CONNECT_CALL.match(last):
        return True
    if not SUBSCRIBE_CALL.match(last):
        return False
    if receiver == "self":
        owner = model.enclosing_class(call)
        return owner is not None and bool(LINK_CLASS.search(owner.name.value))
    return bool(LINK_RECEIVER.search(receiver))


def reraised_before(model: ModuleModel, handler: cst.ExceptHandler) -> str:
    """The classes earlier `except` clauses of the same `try` re-raise (`except ValueError:
    raise`), as written: the catch-all after them retries every *other* exception."""
    owner = model.parents.get(handler)
    if not isinstance(owner, (cst.Try, cst.TryStar)):
        return ""
    names = []
    for earlier in owner.handlers:
        if earlier is handler:
            break
        if earlier.type is not None and always_leaves(list(earlier.body.body)):
            names.append(model.dotted(earlier.type) or cst.Module([]).code_for_node(earlier.type))
    return ", ".join(names)


def _waits_or_talks(model: ModuleModel, nodes: list[cst.CSTNode]) -> bool:
    """A retry loop worth bounding waits between attempts or fails on network errors.
    `while True: try: return sock.recv() except WantRead: wait()` and "try the next
    prime" loops spin on local conditions by design (measured: most of the unbounded
    loops in the standard library and site-packages were of that kind). A loop that reads a
    response's `status_code`, or tests an error's status against an HTTP status
    (`if exc.status == 401:`), talks to another service too."""
    for node in nodes:
        if isinstance(node, cst.Call) and (model.call_name(node) in SLEEPS or sleeps_inside(model, node)):
            return True
        if isinstance(node, cst.Attribute) and node.attr.value == "status_code":
            return True
        if isinstance(node, cst.Comparison) and tests_only_a_status(node):
            return True
        if isinstance(node, cst.ExceptHandler) and node.type is not None:
            caught = " ".join(
                model.qualname(n) or "" for n in expr_nodes(node.type) if isinstance(n, cst.BaseExpression)
            )
            if NETWORK_ERRORS.search(caught):
                return True
    return False


def _guards_a_step(model: ModuleModel, handler: cst.ExceptHandler, loop: cst.CSTNode) -> bool:
    """A handler after which the same pass goes on to more work (`try: old.close() except
    Exception: log(...)`, then the connection is opened anew) guards one step of the attempt;
    it is not what sends the loop round. Waits, logging and counting after it are not work: the
    classic retry sleeps after its handler."""
    return any(_does_work(model, later) for later in _statements_after(model, handler, loop))


def _leaves_after(model: ModuleModel, handler: cst.ExceptHandler, loop: cst.CSTNode) -> bool:
    """A handler that falls through (no `continue` in it) to a `break` or `return` the pass
    reaches before anything that could go round (`try: callback() except Exception: log(...)`,
    then `break`): what it catches ends the loop, it does not send it round. The handlers come
    from the loop's own nodes, not a nested loop's, so a `break` here leaves this loop."""
    if any(isinstance(n, cst.Continue) for n in iter_nodes(handler.body)):
        return False
    for later in _statements_after(model, handler, loop):
        if any(isinstance(n, cst.Continue) for n in iter_nodes(later)):
            return False  # `if result is None: sleep(); continue` first: the pass may go round
        if isinstance(later, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Return, cst.Break)) for s in later.body
        ):
            return True
    return False


def _statements_after(model: ModuleModel, handler: cst.ExceptHandler, loop: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The statements a pass runs after the `try` that holds the handler, block by enclosing
    block out to the loop's body, in order."""
    statement: cst.CSTNode | None = model.parents.get(handler)
    while statement is not None and statement is not loop:
        block = model.parents.get(statement)
        if isinstance(block, (cst.IndentedBlock, cst.Module)):
            yield from list(block.body)[list(block.body).index(statement) + 1 :]  # type: ignore[arg-type]
        statement = block


def _does_work(model: ModuleModel, statement: cst.CSTNode) -> bool:
    """A statement that calls something other than a wait or a log line (what a wait's or a
    log line's arguments call is part of it: `sleep(random.uniform(0, d))`). What runs only on
    the way out of the loop (`if attempts >= limit: fallback(); break`) is not the attempt's."""
    if isinstance(statement, cst.If) and statement.orelse is None and always_leaves(list(statement.body.body)):
        statement = statement.test
    quiet: set[cst.CSTNode] = set()
    for node in iter_nodes(statement):
        if isinstance(node, (cst.Return, cst.Yield)):
            return True
        if not isinstance(node, cst.Call) or node in quiet:
            continue
        if not _waits_or_logs(model, node):
            return True
        quiet.update(iter_nodes(node))
    return False


_ARITHMETIC = frozenset({"min", "max", "abs", "round", "len", "int", "float", "str", "repr", "sum", "pow"})


def _waits_or_logs(model: ModuleModel, call: cst.Call) -> bool:
    """A wait, a log line, or the arithmetic of a delay (`min(cap, base * 2 ** n)`, `random.uniform`)."""
    name = model.call_name(call) or model.dotted(call.func) or ""
    return (
        name in SLEEPS
        or name in _ARITHMETIC
        or name.split(".")[0] in ("random", "math")
        or sleeps_inside(model, call)
        or bool(LOGGING_CALL.match(model.dotted(call.func) or ""))
    )


def _inside_handler(model: ModuleModel, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """A try inside an `except` block (a hook guarded while handling the failure) or inside a
    `finally:` (cleanup, which the loop goes round after whether it fails or not) is not the
    catch that drives the retry."""
    for ancestor in model.ancestors(node):
        if ancestor is loop:
            return False
        if isinstance(ancestor, (cst.ExceptHandler, cst.Finally)):
            return True
    return False


def _loop_bounded(model: ModuleModel, loop: cst.For | cst.While, nodes: list[cst.CSTNode]) -> bool:
    """A counter or clock comparison in the loop test, or an `if` on one that leaves, or a
    handler that goes round only when its test says so and gives up otherwise (the test,
    often a retry object's method, owns the bound)."""
    if passed_every_round(loop, nodes):
        return True
    counters = _counters(nodes)
    return (
        any(
            isinstance(node, cst.If) and _bounds_the_loop(model, node, counters)
            for node in (*nodes, *tests_leaving_every_loop(model, loop))
        )
        or under_a_deadline(model, loop, nodes)
        or goes_round_only_when_counted(model, loop, nodes, counters)
    )


def loop_counters(model: ModuleModel, loop: cst.For | cst.While) -> frozenset[str]:
    """The names a loop steps or spends (`attempts += 1`)."""
    return _counters(loop_nodes(model, loop))


def _counters(nodes: list[cst.CSTNode]) -> frozenset[str]:
    """The names the loop steps (`attempts += 1`) or spends (`can_retry = False`: a counter of two)."""
    stepped = {n.target.value for n in nodes if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name)}
    spent = {
        t.target.value
        for n in nodes
        if isinstance(n, cst.Assign) and isinstance(n.value, cst.Name) and n.value.value in ("True", "False")
        for t in n.targets
        if isinstance(t.target, cst.Name) and is_attempt_counter(t.target.value)
    }
    return frozenset(stepped | spent)


def _bypassed_bound(model: ModuleModel, loop: cst.While, nodes: list[cst.CSTNode]) -> tuple[cst.CSTNode, ...]:
    """(the `continue`, the bound it skips) when a loop bounded only by an `if` in its body goes
    round before reaching it: `if status == 429: sleep(); continue` ahead of `if attempts >=
    limit: raise` retries a rate limit forever. Every way round must pass the bound; a bound in
    the loop test, or a handler whose own test decides each retry, is passed every time."""
    if passed_every_round(loop, nodes):
        return ()
    order = {node: index for index, node in enumerate(iter_nodes(loop.body))}
    counters = _counters(nodes)
    tests = (*nodes, *tests_leaving_every_loop(model, loop))
    bounds = sorted(
        (node for node in tests if isinstance(node, cst.If) and _bounds_the_loop(model, node, counters)),
        key=lambda node: order.get(node, 0),
    )
    if not bounds:
        return ()
    first = order.get(bounds[0], 0)
    skips = sorted(
        (node for node in nodes if isinstance(node, cst.Continue) and order.get(node, first) < first),
        key=lambda node: order.get(node, 0),
    )
    return (skips[0], bounds[0]) if skips else ()


def _bounds_the_loop(model: ModuleModel, node: cst.If, counters: frozenset[str] = frozenset()) -> bool:
    """An `if` on a comparison (`attempts >= limit`), or on a helper that owns the bound (`if
    self._check_give_up(timeout=..., start_time=...): raise`, `if not should_retry(status,
    attempts): raise` given the loop's counter), with a branch that leaves. A test of the
    answer's status against an HTTP status bounds nothing."""
    if not either_branch_leaves(node, model):
        return False
    bound = any(
        isinstance(n, (cst.Name, cst.Attribute))
        and (BOUND_WORDS.search(model.dotted(n) or "") or (isinstance(n, cst.Name) and n.value in counters))
        for n in expr_nodes(node.test)
    )
    if not bound and (tests_only_a_status(node.test) or tests_only_the_caught(model, node)):
        return False  # `if exc.status == 401: continue`, `if e.errno == 111: raise`: which failure, not how often
    # a comparison in the test, or in what a flag it reads holds (`exceeded = tries >= max_tries`)
    return bound or any(isinstance(n, cst.Comparison) for n in origin_nodes(model, node.test))
