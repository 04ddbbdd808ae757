"""Loops that go round again but re-attempt no operation: a supervisor that restarts a
service loop after a crash (also a retry decorator on a thread's `run()` that starts a service, or on a
function looping until stopped), and a readiness check that asks only whether a server is up."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.retry.exits import loop_nodes
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.retries import (
    READINESS_CALL,
    READINESS_PATH,
    SERVICE_LIFE,
    SERVICE_STARTS,
    SLEEPS,
    THREAD_CLASSES,
    is_attempt_counter,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def restarts_a_service(loop: cst.For | cst.While) -> bool:
    """A loop whose `try` runs a service loop of its own (`while True:`, `while not shutdown:`)
    and catches what escapes it: it restarts the service after a crash, it does not re-attempt
    one operation (a batch in a `for` over items is one, and stays a retry)."""
    for statement in loop.body.body:
        if isinstance(statement, cst.Try) and any(
            isinstance(inner, cst.While) and _runs_until_stopped(inner.test) for inner in statement.body.body
        ):
            return True
    return False


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
