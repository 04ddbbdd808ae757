"""Functions and loop bodies that only read and raise until an answer says "ready": a retry
decorator or a retrying iterator that repeats one is a poll, not a retry."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.retry.answers import says_an_outcome
from idemlint.analysis.retry.exits import ends_by_raising, ends_by_returning, sends_a_write
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.repeats import names_a_lookup, words_of

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def only_looks_up(model: ModuleModel, loop: cst.For | cst.While | cst.FunctionDef) -> bool:
    """Every call in the loop (or function) looks something up by its name (`get_connection(...)`,
    `count_assets(...)`), reads a value (`len`, `.json()`), logs, or makes the exception it
    raises: a helper named for an act (`launch_job(spec)`) may send a write each round."""
    nodes = list(model.iter_nodes(loop.body))  # an inner loop's calls too
    raised = {n.exc for n in nodes if isinstance(n, cst.Raise)}
    return all(
        call in raised
        or names_a_lookup(words_of(name := _called(call)))
        or name in _VALUE_READS
        or LOGGING_CALL.match(model.dotted(call.func) or "")
        for call in nodes
        if isinstance(call, cst.Call)
    )


def _called(call: cst.Call) -> str:
    """The name a call spells last: `get_job` for `api.get_job(id)`, `json` for `get(...).json()`."""
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


# what reads a value already fetched (a builtin, an answer's accessors)
_VALUE_READS = frozenset(
    {"len", "abs", "str", "int", "float", "bool", "isinstance", "json", "get", "items", "keys", "values"}
)


def raises_until_ready(model: ModuleModel, function: cst.FunctionDef | cst.For) -> bool:
    """A function a retry decorator repeats, or the body of a retrying iterator's loop, that is a poll: it only reads (no write request:
    no POST, PUT, PATCH or DELETE, no create or send) and raises when a value it read says
    "not yet" (`if order["status"] != "issued": raise ...`, `if len(chain) < 3: raise ...`),
    with no test of a failure (a status code, `ok`, a retryable flag) that would make the
    repetition failure-driven."""
    nodes = list(model.iter_nodes(function.body))
    read: set[str] = set()
    for node in nodes:
        if isinstance(node, cst.Call) and sends_a_write(model, node):
            return False  # a write request, or `session.request("POST", url)`
        if isinstance(node, cst.Assign) and isinstance(node.value, (cst.Call, cst.Await, cst.Subscript, cst.Attribute)):
            read.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
    guards = [n for n in nodes if isinstance(n, cst.If) and ends_by_raising(n.body.body)]
    guards += _returns_before_it_raises(model, function)
    tests = [n.test for n in nodes if isinstance(n, cst.If)]
    if not read or any(says_an_outcome(model, t) for t in tests):
        return False
    return any(model.names_read(guard.test) & read for guard in guards)


def _returns_before_it_raises(model: ModuleModel, function: cst.FunctionDef | cst.For) -> list[cst.If]:
    """`if alive: return True` as the statement before the body's last, `raise NotYet(...)`: it
    raises whenever what it read did not let it return. Not where a handler turns a failure
    into that answer (`except RequestException: alive = False`): a failure would go round."""
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    if len(body) < 2 or not ends_by_raising(body[-1:]) or not isinstance(body[-2], cst.If):
        return []
    guard = body[-2]
    if guard.orelse is not None or not ends_by_returning(guard.body.body):
        return []
    handlers = [n for n in model.iter_nodes(function.body) if isinstance(n, (cst.ExceptHandler, cst.ExceptStarHandler))]
    return [] if any(not ends_by_raising(h.body.body) for h in handlers) else [guard]
