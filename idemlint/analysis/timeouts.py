"""Handlers of an outcome that is not known: timeouts, and what a handler does about one.

A timeout after a request was sent does not say whether the other system acted on it. IDM302
and the audit ask which `except` clauses catch a timeout-bearing exception and whether such a
handler records a definite failure (a failed state, a refund, a compensating call) where the
outcome is in fact unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, keyword, local_callee, string_value
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.states import (
    FAILED_STATE,
    FAILURE_ACTION,
    FAILURE_ERROR,
    SQL_STATE_WRITE,
    STATE_TRANSITION,
    UNKNOWN_STATE,
)
from idemlint.knowledge.timeouts import TIMEOUT_EXCEPTIONS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def timeout_caught(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> str | None:
    """The timeout-bearing exception an `except` clause catches, or None."""
    if handler.type is None:
        return "timeout (a bare except catches it)"
    types = caught_classes(handler.type)
    for expr in types:
        name = model.qualname(expr) or ""
        if name in TIMEOUT_EXCEPTIONS:
            return name
        if name in ("Exception", "BaseException"):
            return f"timeout (caught by except {name})"
    return None


def records_failure(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> str | None:
    """How a handler records a definite failure (a failed state, a refund, a 'failed' error), or None."""
    return failure_in(model, list(model.iter_nodes(handler.body)))


def unconditional_failure(model: ModuleModel, function: cst.FunctionDef) -> tuple[str, cst.CSTNode] | None:
    """How a function records a definite failure on every call (`order.status = "failed"`,
    `payment.set_status(FAILED)` in its own body, not under an `if`, a loop or a handler),
    and the statement that does: a caller's handler that calls it records that failure.
    A function that may record one (`if declined: ...`) is not taken for one that does."""
    for statement in unconditional_statements(function.body):
        nodes = list(model.iter_nodes(statement))
        found = failure_in(model, nodes, calls=False)
        if found is not None:
            # the assignment or call that does it (what the project map knows the line of)
            anchor = next((n for n in nodes if isinstance(n, (cst.Assign, cst.Call))), statement)
            return found, anchor
    return None


def unconditional_statements(block: cst.BaseSuite) -> Iterator[cst.CSTNode]:
    """The statements of a block that run whenever it does: up to its first `if` or loop,
    into `with` and `try` bodies, and not past a `return` or `raise`."""
    body = block.body if isinstance(block, cst.IndentedBlock) else (block,)
    for statement in body:
        if isinstance(statement, (cst.With, cst.Try)):
            yield from unconditional_statements(statement.body)
        elif isinstance(statement, cst.SimpleStatementLine):
            yield statement
            if any(isinstance(small, (cst.Return, cst.Raise)) for small in statement.body):
                return
        elif not isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            return  # an `if` or a loop: what follows may not run


def failure_in(
    model: ModuleModel, nodes: list[cst.CSTNode], calls: bool = True, seen: frozenset[cst.CSTNode] = frozenset()
) -> str | None:
    """How these nodes record a definite failure, or None. With `calls=False` only a failed
    state counts, not a call named for a failure action nor a raise: in a helper's body
    `self._lock.release()` releases a lock, not the customer's stock. A call named for a
    failure action to a function of this module counts only if its body records one
    (`_note_failure(task, exc)` that only prints does not)."""
    for node in nodes:
        value = None
        if isinstance(node, cst.Assign) and any(
            model.vocabulary.records_an_outcome(model.dotted(t.target)) for t in node.targets
        ):
            value = string_value(node.value)
        elif (
            isinstance(node, cst.Arg)
            and node.keyword is not None
            and model.vocabulary.records_an_outcome(node.keyword.value)
            and not _is_lookup(model, node)
        ):
            value = string_value(node.value)
        elif isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
            match = SQL_STATE_WRITE.search(string_value(node) or "")
            value = match.group(2) if match else None
        if value is not None and UNKNOWN_STATE.search(value):
            return None
        if value is not None and FAILED_STATE.search(value):
            return f"state set to {value!r}"
    for node in nodes:
        # `line.set_status(LINE.FULFILLMENT_NETWORK_ERROR)`: a status setter given a failed state
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and (model.vocabulary.is_state_setter(node.func.attr.value) or STATE_TRANSITION.match(node.func.attr.value))
        ):
            # `line.set_status(FAILED)`, `repo.set_status(order_id, "cancelled")`, `set_status(status=...)`
            named = keyword(node, "status") or keyword(node, "state")
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            for arg in [named.value] if named is not None else positional:
                text = string_value(arg) or _constant_name(model, arg)
                tokens = [t for t in re.split(r"[^A-Za-z]+", text) if t]
                if tokens and FAILED_STATE.search(tokens[-1]) and not UNKNOWN_STATE.search(tokens[-1]):
                    return f"state set to {text}"
    for node in nodes if calls else ():
        if isinstance(node, cst.Call):
            dotted = model.dotted(node.func) or ""
            last = dotted.rsplit(".", 1)[-1]
            if (
                FAILURE_ACTION.search(last)
                and not UNKNOWN_STATE.search(last)
                and not last.startswith(("log", "debug", "info", "warn", "exception"))
                and not last.lstrip("_").startswith(("is_", "has_", "should_", "can_"))  # a question, not a record
            ):
                helper = local_callee(model, node)
                if helper is not None and (helper in seen or not _acts(model, helper, seen | {helper})):
                    continue  # its body is here to read, and it only logs
                return f"calls {dotted}()"
        elif isinstance(node, cst.Raise) and isinstance(node.exc, cst.Call):
            raised = model.dotted(node.exc.func) or ""
            if FAILURE_ERROR.search(raised.rsplit(".", 1)[-1]):
                return f"raises {raised}"
    return None


LOGGING_CALL = re.compile(r"^(print|(\w+\.)*(log|logger|logging|LOG|LOGGER|_log|_logger)\.\w+|warnings\.warn)$")


def _acts(model: ModuleModel, helper: cst.FunctionDef, seen: frozenset[cst.CSTNode]) -> bool:
    """A helper named for a failure action does something: it records a failure, or it
    calls anything beyond printing and logging (a refund, a release, a notification)."""
    nodes = list(model.iter_nodes(helper.body))
    if failure_in(model, nodes, True, seen) is not None:
        return True
    logged: set[cst.CSTNode] = set()
    for node in nodes:
        if isinstance(node, cst.Call) and LOGGING_CALL.match(model.dotted(node.func) or ""):
            logged.update(model.iter_nodes(node))  # `print(str(exc))`: the str() only formats the line
    return any(
        isinstance(n, cst.Call) and n not in logged and not LOGGING_CALL.match(model.dotted(n.func) or "")
        for n in nodes
    )


def _constant_name(model: ModuleModel, expr: cst.BaseExpression) -> str:
    """`LINE.NETWORK_ERROR`, `FAILED`: a constant's last name; "" for a variable (`error`)."""
    name = (model.dotted(expr) or "").rsplit(".", 1)[-1]
    return name if isinstance(expr, cst.Attribute) or name.isupper() else ""


def _is_lookup(model: ModuleModel, arg: cst.Arg) -> bool:
    """`filter(status="pending")` names the state looked for, not the one recorded."""
    call = model.parents.get(arg)
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value in ("filter", "exclude", "get", "where", "filter_by", "select_for_update")
    )


def only_rolls_back(model: ModuleModel, handler: cst.CSTNode) -> bool:
    """Whether every failure action the handler takes is a rollback of a database session or
    connection (`db.rollback()`, `await session.rollback()`): the local transaction is rightly
    undone, and what is lost is only the local record of a remote call that may have acted."""
    called = [model.dotted(n.func) or "" for n in model.iter_nodes(handler) if isinstance(n, cst.Call)]
    actions = [name for name in called if FAILURE_ACTION.search(name.rsplit(".", 1)[-1])]
    return bool(actions) and all("." in a and a.rsplit(".", 1)[-1] in ("rollback", "arollback") for a in actions)
