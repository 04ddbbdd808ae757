"""Loops that go round again but re-attempt no operation: a supervisor that restarts a
service loop after a crash, and a readiness check that asks only whether a server is up."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.retry.exits import loop_nodes
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.retries import READINESS_CALL, READINESS_PATH, SLEEPS, is_attempt_counter

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
