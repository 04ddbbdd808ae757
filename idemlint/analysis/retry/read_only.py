"""Functions and loop bodies that only read until an answer says "ready": a retry decorator or a
retrying iterator that repeats one is a poll, not a retry, and so is a loop that repeats only an
HTTP read at a fixed cadence, goes round only while the server says it has the work in hand, or
waits for a record another worker makes to appear."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.http_methods import http_get
from idemlint.analysis.model import ModuleModel, called_name
from idemlint.analysis.retry.answers import says_an_outcome, says_how_it_went
from idemlint.analysis.retry.chains import gives_a_receiver
from idemlint.analysis.retry.exits import always_leaves, ends_by_leaving, ends_by_raising, ends_by_returning, loop_nodes
from idemlint.analysis.retry.not_ready import goes_round_only_when_accepted, means_not_ready
from idemlint.analysis.retry.sends import sends_a_write, writes_here_or_in_helper
from idemlint.analysis.syntax import caught_classes
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.repeats import names_a_lookup, names_a_read, names_an_action, words_of
from idemlint.knowledge.retries import NOT_THERE, SLEEPS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def only_looks_up(model: ModuleModel, loop: cst.For | cst.While | cst.FunctionDef) -> bool:
    """Every call in the loop (or function) looks something up by its name (`get_connection(...)`,
    `count_assets(...)`), reads a value (`len`, `.json()`), logs, or makes the exception it
    raises (and its message): a helper named for an act (`launch_job(spec)`) may send a write each round."""
    nodes = list(model.iter_nodes(loop.body))  # an inner loop's calls too
    raises = [n for n in nodes if isinstance(n, cst.Raise)]
    return all(
        any(model.is_inside(call, r) for r in raises)  # the error raised, and what its message is made of
        and not names_an_action(called_name(call))
        or names_a_lookup(words_of(name := called_name(call)))
        or name in _VALUE_READS
        or LOGGING_CALL.match(model.dotted(call.func) or "")
        for call in nodes
        if isinstance(call, cst.Call)
    )


# what reads a value already fetched (a builtin, an answer's accessors)
_VALUE_READS = frozenset(
    {"len", "abs", "str", "int", "float", "bool", "isinstance", "json", "get", "items", "keys", "values"}
)


def raises_until_ready(model: ModuleModel, function: cst.FunctionDef | cst.For) -> bool:
    """A function a retry decorator repeats, or the body of a retrying iterator's loop, that is a poll: it only reads (no write request:
    no POST, PUT, PATCH or DELETE, no create or send) and raises when a value it read says
    "not yet" (`if order["status"] != "issued": raise ...`, `if len(chain) < 3: raise ...`, a
    `match job.status:` case that raises),
    with no test of a failure (a status code, `ok`, a retryable flag) that would make the
    repetition failure-driven."""
    nodes = list(model.iter_nodes(function.body))
    read: set[str] = set()
    for node in nodes:
        if isinstance(node, cst.Call) and sends_a_write(model, node):
            return False  # a write request, or `session.request("POST", url)`
        if isinstance(node, cst.Assign) and isinstance(node.value, (cst.Call, cst.Await, cst.Subscript, cst.Attribute)):
            read.update(t.target.value for t in node.targets if isinstance(t.target, cst.Name))
    guards = [n.test for n in nodes if isinstance(n, cst.If) and ends_by_raising(n.body.body)]
    guards += [n.test for n in _returns_before_it_raises(model, function)]
    # `match job.status:` with a case that raises (`case "running": raise TryAgain`)
    guards += [n.subject for n in nodes if isinstance(n, cst.Match) and any(_raises(c) for c in n.cases)]
    tests = [n.test for n in nodes if isinstance(n, cst.If)]
    # `match resp.status_code:`, or a `case 503:`: a match on how the work went (a state matched
    # against the states awaited, `match job.status:` with `case JobStatus.FAILED: raise`, is what
    # a poll reads)
    matched = [n.subject for n in nodes if isinstance(n, cst.Match)]
    matched += [n.value for n in nodes if isinstance(n, cst.MatchValue) and isinstance(n.value, cst.Integer)]
    if not read or any(says_an_outcome(model, t) for t in tests) or any(says_how_it_went(model, t) for t in matched):
        return False
    return any(model.names_read(guard) & read for guard in guards)


def _raises(case: cst.MatchCase) -> bool:
    return isinstance(case.body, cst.IndentedBlock) and ends_by_raising(case.body.body)


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


def polls_by_reading(model: ModuleModel, loop: cst.For | cst.While, counter_names: Sequence[str]) -> bool:
    """Every request the loop sends is an HTTP read (`session.get(url)`, `client.request("GET",
    url)`), there is one, nothing in it writes (here or in a helper of the module), and it waits
    a fixed interval (no wait grows with the attempt: `sleep(2 ** attempt)` backs off a retry):
    what a failed round repeats is a read at the poll's cadence."""
    nodes = loop_nodes(model, loop)
    calls = [n for n in nodes if isinstance(n, cst.Call)]
    if not any(http_get(model, c) for c in calls):
        return False
    if any(writes_here_or_in_helper(model, c) or _may_send_anything(model, c) for c in calls):
        return False
    counters = set(counter_names)
    return not any((model.qualname(c.func) or "") in SLEEPS and model.names_read(c) & counters for c in calls)


def _may_send_anything(model: ModuleModel, call: cst.Call) -> bool:
    """`session.request(method, url)`, `urlopen(request)`: a request whose method is data (a
    `send` is a write already)."""
    return called_name(call) in ("request", "urlopen") and not http_get(model, call)


def polls_accepted_work(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """`except E as exc: if exc.code != 202: raise` and `else: break`: the loop goes round only
    while the server says it has the work in hand, and leaves when it answers: a poll."""
    return any(
        isinstance(n, (cst.Try, cst.TryStar))
        and any(goes_round_only_when_accepted(model, h) for h in n.handlers)
        and any(ends_by_leaving(list(block.body)) for block in (n.body, *((n.orelse.body,) if n.orelse else ())))
        for n in loop_nodes(model, loop)
    )


def waits_for_a_record(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """A round that only reads, and goes round only where the record it looks up is not there
    yet (`except RecordNotFound: sleep(1)`, `DoesNotExist`, `NoResultFound`): it waits for
    another worker to make it. Every call of the loop reads by its name (`get_route`,
    `share_instance_get`), logs, waits, reads a value or makes what it raises: one named for
    nothing it reads (`place_order`, `attach_interface`) may act each round."""
    nodes = loop_nodes(model, loop)
    staying = [
        h
        for t in nodes
        if isinstance(t, (cst.Try, cst.TryStar))
        for h in t.handlers
        if not always_leaves(h.body.body) and not means_not_ready(model, h)
    ]
    if not staying or not all(_catches_only_missing(model, h) for h in staying):
        return False
    return reads_only(model, nodes)


def reads_only(model: ModuleModel, nodes: Sequence[cst.CSTNode]) -> bool:
    """Every call among `nodes` reads by its name (`get_route`, `share_instance_get`, `show_port`;
    a link of a chain, `clients.client("neutron").show_port(id)`, by the chain's last call; a
    context the round opens, `with profile.session() as session:`, by what it runs inside), logs,
    waits, reads the clock or a value, or makes what it raises or a value (a class): one named
    for nothing it reads (`place_order`, `attach_interface`) may act."""
    raised = {n.exc for n in nodes if isinstance(n, cst.Raise)}
    return all(
        call in raised
        or not sends_a_write(model, call)
        and (
            names_a_read(words_of(name := called_name(call)))
            or name in _VALUE_READS | _BUILTIN_READS
            or _an_error_or_value(model, call, name)
            or (model.qualname(call.func) or "") in SLEEPS | _CLOCK
            or LOGGING_CALL.match(model.dotted(call.func) or "")
            or gives_a_receiver(model, call, name)
            or isinstance(model.parents.get(call), cst.WithItem)
            and not names_an_action(name)  # `with db.session() as s:`
        )
        for call in nodes
        if isinstance(call, cst.Call)
    )


def _an_error_or_value(model: ModuleModel, call: cst.Call, name: str) -> bool:
    """`TimeoutError(...)`, `Decimal(x)`: a class of the module's or one it imports, or one named
    for an error; not a remote method spelt in capitals (`stub.CreateOrder(request)`)."""
    if name.endswith(("Error", "Exception")):
        return True
    return isinstance(call.func, cst.Name) and (
        isinstance(model.module_defs.get(name), cst.ClassDef) or name in model.imports
    )


def _catches_only_missing(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    caught = caught_classes(handler.type) if handler.type is not None else []
    return bool(caught) and all(NOT_THERE.search((model.dotted(e) or "").rsplit(".", 1)[-1]) for e in caught)


_CLOCK = frozenset({"time.time", "time.monotonic"})
# builtins that read what they are given, and gettext's `_("...")`
_BUILTIN_READS = frozenset(
    {"_", "getattr", "hasattr", "all", "any", "set", "list", "dict", "tuple", "sorted", "min", "max", "sum"}
)
