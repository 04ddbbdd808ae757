"""Waits that no shared service sees: a retry of this machine's own resources (a lock file, a
file another process holds, a local port still bound or not yet listening), where jitter breaks
up no herd."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.http_methods import http_get
from idemlint.analysis.model import ModuleModel, iter_nodes, string_value
from idemlint.analysis.policy.common import handler_around, local_database_errors
from idemlint.analysis.retry import SLEEPS, always_leaves
from idemlint.analysis.retry.sends import sends_a_write
from idemlint.analysis.syntax import caught_classes, excluded_values
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.retries import (
    LOCAL_CONTENTION_ERRNOS,
    LOCAL_CONTENTION_ERRORS,
    LOCAL_FILE_OPERATIONS,
    LOOPBACK,
    TIMEOUT_WRAPPERS,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def retries_a_local_resource(model: ModuleModel, sleep: cst.Call, loop: cst.For | cst.While) -> bool:
    """The wait is in a handler whose `try` attempts only this machine's file operations
    (`fcntl.lockf(fd, LOCK_NB)`, `os.link(...)`, `FileStorage(io.open(path))`), or that catches
    only what a file another local process holds raises (`except FileExistsError:` round a
    helper creating a lock file), or that only connects to a loopback address (a local service
    coming up), or that leaves unless the error says a local address is
    taken (`if err.errno != errno.EADDRINUSE: raise`): no herd of clients comes back to a
    shared service at once."""
    handler = handler_around(model, sleep)
    attempt = model.parents.get(handler) if handler is not None and model.is_inside(handler, loop) else None
    if not isinstance(attempt, cst.Try):
        return False
    assert handler is not None
    caught = caught_classes(handler.type)
    requests = any(
        isinstance(n, cst.Call) and (sends_a_write(model, n) or http_get(model, n)) for n in iter_nodes(attempt.body)
    )  # a round that also sends a request comes back to a shared service
    if caught and all((model.dotted(e) or "").rsplit(".", 1)[-1] in LOCAL_CONTENTION_ERRORS for e in caught):
        return not requests  # `except FileExistsError:` round a lock file's create: another local process holds it
    if handler.type is not None and local_database_errors(model, handler.type):
        return not requests  # `except sqlite3.OperationalError:` ("database is locked"): a file of this machine
    if _leaves_unless_taken(model, handler):
        return not requests  # `if err.errno != errno.EADDRINUSE: raise`: a port another local process holds
    calls = [  # a helper that sleeps may also send: only a wait or a log line is no attempt
        n
        for n in iter_nodes(attempt.body)
        if isinstance(n, cst.Call)
        and model.call_name(n) not in SLEEPS
        and not LOGGING_CALL.match(model.dotted(n.func) or "")
    ]
    local = [c for c in calls if model.call_name(c) in LOCAL_FILE_OPERATIONS or _connects_to_this_machine(model, c)]
    return bool(local) and all(
        c in local or _reads_a_local_result(model, c, local) or model.call_name(c) in TIMEOUT_WRAPPERS for c in calls
    )


def _connects_to_this_machine(model: ModuleModel, call: cst.Call) -> bool:
    """`asyncio.open_connection("127.0.0.1", port)`, `socket.create_connection(("localhost", port))`:
    a loopback address reaches a process on this machine (a service it just started)."""
    if "connect" not in (model.call_name(call) or "").rsplit(".", 1)[-1].lower():
        return False
    values = [a.value for a in call.args]
    values += [e.value for v in values if isinstance(v, cst.Tuple) for e in v.elements]
    return any(LOOPBACK.match(string_value(v) or "") for v in values)


def _reads_a_local_result(model: ModuleModel, call: cst.Call, local: list[cst.Call]) -> bool:
    """`open(path).read()`, `FileStorage(io.open(path))`: a method of what a local call gave, or
    a class built on it; not `requests.post(data=open(path))`, which sends it."""
    if isinstance(call.func, cst.Attribute) and any(call.func.value is c for c in local):
        return True
    last = (model.call_name(call) or "").rsplit(".", 1)[-1]
    return last[:1].isupper() and any(model.is_inside(c, call) for c in local)


def _leaves_unless_taken(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """The handler's first statement leaves unless the error's number says "taken here"
    (`if err.args[0] != errno.EADDRINUSE: raise`, `if e.errno not in (errno.EADDRINUSE,): raise`)."""
    body = handler.body.body
    first = body[0] if body else None
    if not isinstance(first, cst.If) or not always_leaves(list(first.body.body)):
        return False
    numbers = excluded_values(first.test)
    return bool(numbers) and all((model.dotted(n) or "").rsplit(".", 1)[-1] in LOCAL_CONTENTION_ERRNOS for n in numbers)
