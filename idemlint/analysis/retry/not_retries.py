"""Loops that go round again but re-attempt no operation: a supervisor that restarts a
service loop after a crash (also a retry decorator on a thread's `run()` that starts a service, or on a
function looping until stopped), and a readiness check that asks only whether a server is up."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.http_methods import http_get
from idemlint.analysis.model import ModuleModel, called_name, positional_parameters
from idemlint.analysis.retry.exits import always_leaves, loop_nodes, tries_going_round
from idemlint.analysis.retry.sends import sends_a_write
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.keys import CLOCK_CALLS
from idemlint.knowledge.repeats import names_an_action, words_of
from idemlint.knowledge.retries import (
    READINESS_CALL,
    READINESS_PATH,
    SERVICE_LIFE,
    SERVICE_STARTS,
    SERVICE_WORDS,
    SLEEPS,
    THREAD_CLASSES,
    is_attempt_counter,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def restarts_a_service(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """A loop whose `try` runs a service loop of its own (`while True:`, `while not shutdown:`),
    or work it hands its own stop flag (`while not exit_event.is_set(): try: serve(exit_event)`),
    and catches what escapes it: it restarts the service after a crash, it does not re-attempt
    one operation (a batch in a `for` over items is one, and stays a retry)."""
    stop = _stop_flag(loop.test) if isinstance(loop, cst.While) else None
    for statement in loop.body.body:
        if isinstance(statement, cst.Try) and any(
            isinstance(inner, cst.While) and _runs_until_stopped(inner.test) or stop and _hands_over(model, inner, stop)
            for inner in statement.body.body
        ):
            return True
    return False


def _stop_flag(test: cst.BaseExpression) -> str | None:
    """`exit_event` of `while not exit_event.is_set():`: the name a service's life is tested by."""
    if not _stopped_from_outside(test):
        return None
    while not isinstance(test, cst.Name):
        if isinstance(test, cst.UnaryOperation):
            test = test.expression
        elif isinstance(test, cst.Call):
            test = test.func
        elif isinstance(test, cst.Attribute):
            test = test.value
        else:
            return None
    return test.value if test.value not in ("self", "cls") else None


def _hands_over(model: ModuleModel, statement: cst.CSTNode, stop: str) -> bool:
    """`serve(exit_event)`: the statement runs work handed the loop's own stop flag, a service
    that runs until it is set (one operation is not told when to stop): a callable the function
    was handed (`function(exit_event)`) or one named for serving (`serve`, `consume`, `listen`),
    not a write, nor a call named for an act (`gateway.settle(invoice, stop)`)."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
    call = small.value if isinstance(small, cst.Expr) else None
    call = call.expression if isinstance(call, cst.Await) else call
    if not isinstance(call, cst.Call) or sends_a_write(model, call) or names_an_action(called_name(call)):
        return False  # `client.post(..., cancel)`: one request, told when to give up
    function = model.enclosing_function(statement)
    handed_in = (
        function is not None
        and isinstance(call.func, cst.Name)
        and call.func.value in positional_parameters(model, function)
    )
    serves = bool(set(words_of(called_name(call))) & SERVICE_WORDS)
    return (handed_in or serves) and any(
        arg.keyword is None and isinstance(arg.value, cst.Name) and arg.value.value == stop for arg in call.args
    )


def supervises_a_service(
    model: ModuleModel, function: cst.FunctionDef, thread_class: Callable[[cst.ClassDef], bool] | None = None
) -> bool:
    """A function whose repetition by a retry decorator restarts a service rather than
    re-attempting one operation: its body runs a loop stopped from outside (`while not
    stop.is_set():`, `while self.running:`), or it is a thread's (or process's) `run()` that
    starts a long-lived service (`self._stream.start()`, `server.serve_forever()`; the class a
    `threading.Thread` through its bases, here or, as far as the project index knows them,
    elsewhere). Nothing waits for its answer, and giving up leaves the service dead. A thread
    whose `run()` sends one upload is retried like any function."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    statements: list[cst.BaseStatement] = []
    for statement in body:
        tried = statement.body if isinstance(statement, cst.Try) else None
        statements.extend(tried.body if isinstance(tried, cst.IndentedBlock) else [statement])
    if any(isinstance(loop, cst.While) and _stopped_from_outside(loop.test) for loop in statements):
        return True
    owner = model.enclosing_class(function)
    if function.name.value != "run" or owner is None or not any(_starts_a_service(s) for s in statements):
        return False
    if any(model.qualname(base.value) in THREAD_CLASSES for base in owner.bases):
        return True
    return thread_class is not None and thread_class(owner)


def _stopped_from_outside(test: cst.BaseExpression) -> bool:
    """`while not stop.is_set():`, `while self.running:`, `while not self.is_alive():`, `while not
    shutdown:`: a test of a flag named for the service's life (not `while True:`, `while pages:`
    or `while not done:`, which the work itself ends)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test = test.expression
    if isinstance(test, cst.Call) and not test.args:
        test = test.func
    name = test.value if isinstance(test, cst.Name) else test.attr.value if isinstance(test, cst.Attribute) else ""
    return bool(SERVICE_LIFE.search(name))


def _starts_a_service(statement: cst.BaseStatement) -> bool:
    """`self._stream.start()`, `server.serve_forever()`: a statement that runs a service."""
    small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and statement.body else None
    call = small.value if isinstance(small, cst.Expr) else None
    if isinstance(call, cst.Await):
        call = call.expression
    return (
        isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and call.func.attr.value in SERVICE_STARTS
    )


def _runs_until_stopped(test: cst.BaseExpression) -> bool:
    """`True`, `not shutdown`, `self.running`: a service's loop, not a count of attempts."""
    if isinstance(test, cst.Name):
        return test.value == "True" or not is_attempt_counter(test.value)
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return isinstance(test.expression, (cst.Name, cst.Attribute))
    return isinstance(test, cst.Attribute)


def checks_readiness(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """A loop that asks a server whether it is up yet (`get("/.well-known/ready")`,
    `requests.get(f"{url}/healthz")`, `check_health(db)`, `ping()`) and nothing else: a failure
    there means "not up yet" (or a failed probe), and the loop samples health, a poll, whatever
    exceptions say so."""
    calls = [n for n in loop_nodes(model, loop) if isinstance(n, cst.Call)]
    if _only_probes(model, calls) and _until_a_deadline(model, loop):
        return True
    asks = [
        c
        for c in calls
        if READINESS_CALL.match((model.call_name(c) or "").rsplit(".", 1)[-1])
        or any(
            isinstance(a.value, (cst.SimpleString, cst.FormattedString))
            and READINESS_PATH.search(model.module.code_for_node(a.value))
            for a in c.args
        )
    ]
    return bool(asks) and not any(
        c not in asks
        and not model.is_inside(c, a)
        and not model.is_inside(a, c)
        and (model.call_name(c) or "").rsplit(".", 1)[-1] not in _READINESS_HELPERS
        and model.call_name(c) not in SLEEPS
        and not LOGGING_CALL.match(model.dotted(c.func) or "")
        for c in calls
        for a in asks
    )


# what a readiness check's answer is read with, around the request itself
_READINESS_HELPERS = frozenset({"raise_for_status", "result", "json", "sleep", "get", "len", "str"})


def _only_probes(model: ModuleModel, calls: list[cst.Call]) -> bool:
    """Every request in the loop is a GET whose answer is thrown away (`with urlopen(url):
    return`, `session.get(url).raise_for_status()`), beside waits, clocks and log lines: the
    loop learns only that the server answered, a readiness probe, whatever it is named."""
    gets = [c for c in calls if http_get(model, c)]
    if not gets or not all(_discarded(model, c) for c in gets):
        return False
    return all(
        any(c is g or model.is_inside(c, g) for g in gets)
        or model.call_name(c) in SLEEPS
        or model.call_name(c) in CLOCK_CALLS
        or LOGGING_CALL.match(model.dotted(c.func) or "")
        or _checks_the_answer(c, gets)
        for c in calls
    )


def _until_a_deadline(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """The loop waits against the clock (`while time.monotonic() < deadline:`), or the code
    after it gives up in time (`raise TimeoutError(url)`): a wait for something to come up, not
    a few attempts at an act (`for _ in range(5): requests.get(send_url)`)."""
    if isinstance(loop, cst.While) and any(
        isinstance(n, cst.Call) and model.call_name(n) in CLOCK_CALLS for n in model.iter_nodes(loop.test)
    ):
        return True
    block = model.parents.get(loop)
    statements = list(block.body) if isinstance(block, cst.IndentedBlock) else [loop]
    after = statements[statements.index(loop) + 1 :]
    first = after[0] if after else None
    raised = first.body[0] if isinstance(first, cst.SimpleStatementLine) and first.body else None
    if not isinstance(raised, cst.Raise) or raised.exc is None:
        return False
    made = raised.exc.func if isinstance(raised.exc, cst.Call) else raised.exc
    return bool(_TIMEOUT_ERROR.search((model.dotted(made) or "").rsplit(".", 1)[-1]))


_TIMEOUT_ERROR = re.compile(r"Timeout|TimedOut|NotReady", re.I)


def _checks_the_answer(call: cst.Call, gets: list[cst.Call]) -> bool:
    """`session.get(url).raise_for_status()`: the answer's own check, on a GET of the loop."""
    func = call.func
    return isinstance(func, cst.Attribute) and func.attr.value == "raise_for_status" and func.value in gets


def _discarded(model: ModuleModel, call: cst.Call) -> bool:
    """The answer is not kept: the call is a statement of its own, a `with` item without `as`,
    or checked in place by `.raise_for_status()` as a statement."""
    parent = model.parents.get(call)
    if isinstance(parent, cst.Await):
        parent = model.parents.get(parent)
    if isinstance(parent, cst.Attribute) and parent.attr.value == "raise_for_status":
        checked = model.parents.get(parent)
        parent = model.parents.get(checked) if checked is not None else None
    return isinstance(parent, cst.Expr) or isinstance(parent, cst.WithItem) and parent.asname is None


def tries_next_candidate(model: ModuleModel, loop: cst.For | cst.While, try_node: cst.Try | cst.TryStar) -> bool:
    """`for n in range(100): try: mkdir(f"{prefix}{n}")`, or `while counter < LIMIT:` whose
    handler moves `counter` on: each pass tries a different input, so a failure moves on to
    the next candidate (a search, not a retry). Only the candidate's use in the work itself
    counts (not in a log line), directly or through a value the loop computes from it before
    the try (`digest = sha256(msg + counter)`). A name that counts attempts is no candidate."""
    if isinstance(loop, cst.For):
        counters = {n.value for n in (loop.target, *model.iter_nodes(loop.target)) if isinstance(n, cst.Name)}
    else:
        tested = {n.value for n in (loop.test, *model.iter_nodes(loop.test)) if isinstance(n, cst.Name)}
        moved = {
            n.target.value
            for handler in try_node.handlers
            for n in model.iter_nodes(handler.body)
            if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name)
        }
        counters = {name for name in tested & moved if not is_attempt_counter(name)}
        counters |= computed_before_the_try(model, loop, try_node, counters)
    for node in model.iter_nodes(try_node.body):
        if isinstance(node, cst.Name) and node.value in counters:
            if any(isinstance(a, cst.Comparison) for a in model.ancestors(node, until=try_node)):
                continue  # `if i < attempts:` checks the bound, it is not the work's input
            call = next((a for a in model.ancestors(node) if isinstance(a, cst.Call)), None)
            callee = (model.dotted(call.func) or "") if call is not None else ""
            if not re.search(r"(^|\.)(log|logger|logging|print|warn|info|debug|warning|error)\b", callee):
                return True
    return False


def computed_before_the_try(
    model: ModuleModel, loop: cst.For | cst.While, try_node: cst.CSTNode, sources: set[str]
) -> set[str]:
    """Names the loop's body assigns, before the try, from one of `sources`."""
    found: set[str] = set()
    if not sources:
        return found
    for statement in loop.body.body if isinstance(loop.body, cst.IndentedBlock) else ():
        if statement is try_node:
            break
        for node in model.iter_nodes(statement):
            if isinstance(node, cst.Assign) and any(
                isinstance(n, cst.Name) and n.value in sources for n in model.iter_nodes(node.value)
            ):
                found.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
    return found


def follows_what_each_failure_names(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """Every `try` of the loop with a handler that goes round follows what its failure named
    (`follows_what_it_caught`): the loop walks redirects, it retries nothing."""
    going = tries_going_round(model, loop)
    return bool(going) and all(follows_what_it_caught(model, n) for n in going)


def follows_what_it_caught(model: ModuleModel, try_node: cst.Try | cst.TryStar) -> bool:
    """`except Moved as moved: url = moved.location`, `except OffchainLookup as e:
    transaction["data"] = resolve(e.payload)`: each handler that goes round again rebinds, on
    every way through it (a statement of its own body, not under an `if`), an input the work is
    handed (`work_inputs`) from the error it caught (directly or through names it binds from it),
    so the next round sends what the last answer asked for: a redirect followed, not a retry. A
    handler that goes round with the same input (the error logged, kept in `self.last_error` or
    in a delay only a sleep reads) makes it a retry again."""
    inputs = work_inputs(model, try_node.body)
    for handler in try_node.handlers:
        if always_leaves(list(handler.body.body)):
            continue
        name = handler.name.name if handler.name is not None else None
        if not isinstance(name, cst.Name) or not _rebinds_from(model, handler.body, name.value, inputs):
            return False
    return True


def work_inputs(model: ModuleModel, body: cst.CSTNode) -> set[str]:
    """What the work in `body` is handed: the names and attribute chains (`url`, `transaction`,
    `self.url`) in the arguments and receivers of its calls, not a sleep's, a log line's or the
    clock's, and not an attribute's own name (`status_code` of `resp.status_code`)."""
    found: set[str] = set()
    for call in (n for n in model.iter_nodes(body) if isinstance(n, cst.Call)):
        name = model.call_name(call) or ""
        if name in SLEEPS or name in CLOCK_CALLS or LOGGING_CALL.match(model.dotted(call.func) or ""):
            continue
        parts = [a.value for a in call.args] + ([call.func.value] if isinstance(call.func, cst.Attribute) else [])
        for part in parts:
            for node in (part, *model.iter_nodes(part)):
                parent = model.parents.get(node)
                if isinstance(parent, cst.Attribute) and parent.attr is node:
                    continue
                if isinstance(node, (cst.Name, cst.Attribute)) and (dotted := model.dotted(node)):
                    found.add(dotted)
    return found


def _rebinds_from(model: ModuleModel, body: cst.BaseSuite, caught: str, inputs: set[str]) -> bool:
    """A statement of `body` itself stores, into an input of the work (or an item of one), a
    value computed from `caught` or from a name an earlier statement bound from it."""
    derived = {caught}
    for line in body.body:
        for node in line.body if isinstance(line, cst.SimpleStatementLine) else ():
            if not isinstance(node, cst.Assign) or not model.names_read(node.value) & derived:
                continue
            for target in node.targets:
                stored: cst.BaseExpression = target.target
                while isinstance(stored, cst.Subscript):
                    stored = stored.value  # `transaction["data"] = ...` changes `transaction`
                dotted = model.dotted(stored)
                if dotted in inputs and dotted != caught:
                    return True
                if isinstance(target.target, cst.Name):
                    derived.add(target.target.value)
    return False
