"""What lets a loop go round without a failure: "nothing there yet" (an empty queue, a wait
that ended with nothing to take, an item not listed yet, 202 Accepted) rather than "the work
failed". A handler that catches only these waits for input; it re-attempts nothing."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, called_name
from idemlint.analysis.retry.answers import given_a_time
from idemlint.analysis.retry.exits import always_leaves, fails_the_loop_test, loop_nodes, tries_going_round
from idemlint.analysis.retry.reach import catches_what_its_try_cannot_raise
from idemlint.analysis.retry.sends import sends_a_write_among
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.repeats import words_of
from idemlint.knowledge.retries import (
    BARE_TIMEOUTS,
    EMPTY_CONTAINER_ERRORS,
    NOT_FOUND_IN_ANSWER,
    NOT_READY_ERRORS,
    SENDING_WORDS,
    SOCKET_READS,
    SOCKET_SENDS,
    TAKE_METHODS,
    TAKE_VERBS,
    TIMED_TAKES,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def goes_round_on_failure(model: ModuleModel, try_node: cst.Try | cst.TryStar) -> bool:
    """Some handler stays in the loop after a failure: not one that leaves, nor one that
    catches only "nothing there yet" (`except queue.Empty:`), which is waiting, not failing,
    nor one of what the `try` cannot raise."""
    return any(
        not always_leaves(handler.body.body)
        and not fails_the_loop_test(model, handler)
        and not means_not_ready(model, handler)
        and not catches_what_its_try_cannot_raise(model, handler)
        for handler in try_node.handlers
    )


def means_not_ready(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """What the handler lets go round is "nothing there yet", not a failure: an empty queue
    (`except queue.Empty:`), a wait that ended with nothing (`except LockTimeout:`, or a bare
    `TimeoutError` from a take given a time, `drain_events(timeout=5)`), or, on a request that only
    reads, an answer of 202 Accepted (`if exc.code != HTTPStatus.ACCEPTED: raise`: the server has
    the work in hand and not done)."""
    if goes_round_only_when_accepted(model, handler):
        return True
    caught = handler.type
    if caught is None:
        return False
    elements = caught_classes(caught)
    names = [(model.dotted(e) or "").rsplit(".", 1)[-1] for e in elements]
    if all(NOT_READY_ERRORS.match(name) for name in names):
        return True
    attempt = model.parents.get(handler)
    if not isinstance(attempt, (cst.Try, cst.TryStar)):
        return False
    if all((model.qualname(e) or "") in BARE_TIMEOUTS for e in elements) and _only_takes_in_time(model, attempt):
        return True
    if all(name in NOT_FOUND_IN_ANSWER for name in names) and _searches_an_answer(model, attempt):
        return True
    if not all(name in EMPTY_CONTAINER_ERRORS for name in names):
        return False
    calls = [n for n in model.iter_nodes(attempt.body) if isinstance(n, cst.Call)]
    return any(isinstance(n.func, cst.Attribute) and n.func.attr.value in TAKE_METHODS for n in calls) or (
        len(calls) == 1 and _takes_alone(model, calls[0])
    )


# what a consumer takes in time: not a lock's `acquire`, after which work follows
_CONSUMER_TAKES = TIMED_TAKES - {"acquire"}


def waits_for_messages(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """Every `try` of the loop with a handler that goes round only waits to take the next
    message for a time it was given (`msg = await sub.get_message(timeout=1.0)`,
    `consumer.poll(timeout_ms=500)`; not a lock's `acquire`, after which work follows), and
    nothing in the loop sends (`basic_publish(...)` then `drain_events(timeout=5)` is a request
    and its answer): a consumer, which goes round to wait again (after subscribing again where
    the wait failed), re-attempting nothing another system acts on."""
    nodes = loop_nodes(model, loop)
    going = tries_going_round(model, loop)
    calls = [n for n in nodes if isinstance(n, cst.Call)]
    if (
        not going
        or sends_a_write_among(model, calls)
        or any(SENDING_WORDS & set(words_of(_method_name(model, c))) for c in calls)
    ):
        return False
    return all(
        _only_takes_in_time(model, n)
        and any(_method_name(model, c) in _CONSUMER_TAKES for c in model.iter_nodes(n.body) if isinstance(c, cst.Call))
        for n in going
    )


def _only_takes_in_time(model: ModuleModel, attempt: cst.Try | cst.TryStar) -> bool:
    """The `try` waits to take something, for a time it was given (`drain_events(timeout=5)`,
    `consumer.poll(poll_timeout)`, `sock.recv(n)` after `sock.settimeout(...)`; a socket method's
    own read, `self.sock.recv(n)`, times out only where its socket was given a time, wherever
    that was), and sends nothing: a timeout there is a wait that ended with nothing, not a
    request left unanswered."""
    calls = [n for n in model.iter_nodes(attempt.body) if isinstance(n, cst.Call)]
    names = [_method_name(model, c) for c in calls]
    takes = [(c, name) for c, name in zip(calls, names, strict=True) if name in TIMED_TAKES]
    sends = any(name in SOCKET_SENDS for name in names)
    return (
        bool(takes)
        and all(name in SOCKET_READS and not sends or given_a_time(model, c) for c, name in takes)
        and not sends_a_write_among(model, calls)
    )


def _method_name(model: ModuleModel, call: cst.Call) -> str:
    """The called method's own name (`called_name`), also through a local alias of it (`_recv =
    ctx.socket.recv`, then `_recv(4096)`)."""
    if isinstance(call.func, cst.Name) and isinstance(alias := model.sole_value(call.func), cst.Attribute):
        return alias.attr.value
    return called_name(call)


def _searches_an_answer(model: ModuleModel, attempt: cst.Try | cst.TryStar) -> bool:
    """The `try` only reads and looks for an item in what it was given (`[n for n in nodes if
    n.id == sid][0]`, `next(j for j in jobs if j.name == name)`): an `IndexError` or
    `StopIteration` there says the answer does not hold it yet (a new server missing from a
    listing), not that a call failed. One that sends a write first has acted already."""
    nodes = list(model.iter_nodes(attempt.body))
    if sends_a_write_among(model, nodes):
        return False
    for node in nodes:
        found = None
        if isinstance(node, cst.Subscript):
            found = node.value
        elif isinstance(node, cst.Call) and model.call_name(node) == "next" and len(node.args) == 1:
            found = node.args[0].value
        if isinstance(found, (cst.ListComp, cst.GeneratorExp)) and _filters(found.for_in):
            return True
    return False


def _filters(clause: cst.CompFor | None) -> bool:
    """Some `for` of the comprehension has an `if`."""
    return clause is not None and (bool(clause.ifs) or _filters(clause.inner_for_in))


def _takes_alone(model: ModuleModel, call: cst.Call) -> bool:
    """`job = tasks.pop_task()`, the attempt's only call: the project's own method named for
    taking an item out (`pop_`, `dequeue_`), its answer not looked into (a `KeyError` from
    `reply["job"]` is the reply's, not an empty store's)."""
    words = words_of(call.func.attr.value) if isinstance(call.func, cst.Attribute) else []
    return bool(words) and words[0] in TAKE_VERBS and not isinstance(model.parents.get(call), cst.Subscript)


# the answer that says "accepted, not done yet": 202, as a number or a constant's name
_ACCEPTED = re.compile(r"^(?:202|(?:\w+\.)*(?:ACCEPTED|HTTP_202_ACCEPTED|codes\.accepted))$")
_STATUS_ATTRIBUTES = frozenset({"code", "status", "status_code"})


def goes_round_only_when_accepted(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """The handler first leaves for every status of what it caught but 202 (`if exc.code !=
    202: raise`), and the loop around it sends no write, itself or through a function of the
    module: a poll of work the server accepted."""
    body = handler.body.body
    first = body[0] if body else None
    attempt = model.parents.get(handler)
    if (
        not isinstance(first, cst.If)
        or not isinstance(attempt, (cst.Try, cst.TryStar))
        or not always_leaves(first.body.body)
    ):
        return False
    test = first.test
    if not (
        isinstance(test, cst.Comparison)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, cst.NotEqual)
        and isinstance(test.left, cst.Attribute)
        and test.left.attr.value in _STATUS_ATTRIBUTES
        and _ACCEPTED.match(
            model.dotted(test.comparisons[0].comparator) or model.module.code_for_node(test.comparisons[0].comparator)
        )
    ):
        return False
    loop = next((a for a in model.ancestors(handler) if isinstance(a, (cst.For, cst.While, cst.FunctionDef))), None)
    return not sends_a_write_among(
        model, model.iter_nodes(loop.body if isinstance(loop, (cst.For, cst.While)) else attempt.body)
    )
