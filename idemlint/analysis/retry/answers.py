"""What the work answered, and whether a loop goes round because the answer says it failed.

A retry goes round on the failure of its work: an exception, or an answer that says so (a
success flag, `ok`, a status code, a "retryable" test). `while not success and attempts < 5:
success = post(...)` is a retry with no `try` at all. A loop that goes round until an answer
says "ready" is a poll, and one that changes what it sends each pass a search.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, called_name, string_value
from idemlint.analysis.retry.counters import attempt_counters
from idemlint.analysis.retry.exits import loop_nodes
from idemlint.analysis.retry.sends import sends_a_write_among
from idemlint.knowledge.repeats import words_of
from idemlint.knowledge.retries import IN_FLIGHT_WAITS, NEXT_ITEM_CALLS, OVER, WAIT_ONLY_CALLS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


# What says the work failed and may be tried again: an HTTP status code or a transient one
# (408, 425, 429, 5xx), a response's `ok`/`success`, a `retryable`/`throttled` test.
_RETRYABLE = r"retr(y|iable|yable)|throttl|rate_?limit"
_RETRYABLE_WORDS = re.compile(_RETRYABLE, re.I)
_ANSWER_WORDS = re.compile(
    rf"^ok$|^success(ful)?$|is_success|{_RETRYABLE}", re.I
)  # but a status code, which polls test too
FAILURE_WORDS = re.compile(rf"status_code|{_ANSWER_WORDS.pattern}", re.I)
_STATUS_CODE = re.compile(r"^status_code$")
TRANSIENT_STATUS = re.compile(r"^(408|425|429|5\d\d)$")
_SUCCESS_STATUS = re.compile(r"^2\d\d$")
_NOTHING = re.compile(r"(?!)")
_READY = re.compile(r"ready|done|finish|complete|status|state", re.I)


def says_failure(
    model: ModuleModel,
    test: cst.BaseExpression,
    words: re.Pattern[str] = FAILURE_WORDS,
    codes: re.Pattern[str] = TRANSIENT_STATUS,
) -> bool:
    """A test on whether the work failed: a status code, a transient status, `ok`, a retryable
    flag (or, with other `words` and `codes`, any outcome the work reports)."""
    for node in (test, *model.iter_nodes(test)):
        if isinstance(node, cst.Name) and words.search(node.value):
            return True
        if isinstance(node, cst.Attribute) and words.search(node.attr.value):
            return True
        if isinstance(node, cst.Integer) and codes.match(node.value):
            return True
    return False


def says_how_it_went(model: ModuleModel, test: cst.BaseExpression) -> bool:
    """`says_an_outcome`, but a `status` compared with no HTTP code is a state compared with the
    one awaited (`stack.status == wanted`), which a poll reads."""
    return says_an_outcome(model, test, _FAILED)


def says_retryable(model: ModuleModel, test: cst.BaseExpression) -> bool:
    """A test that the answer is worth another attempt: a retryable flag or check, a throttle,
    a transient status code (408, 425, 429, 5xx); not a bare status test, which may be a
    poll's "not ready yet" (202)."""
    return says_failure(model, test, _RETRYABLE_WORDS)


def only_waits(model: ModuleModel, call: cst.Call) -> bool:
    """`stop.wait()`, `time.sleep(n)`, `asyncio.wait_for(stop.wait(), timeout)`, a future's
    `result(timeout=60)`: a wait for an event, a time or work already in flight, not for the
    answer to a request (`wait_for(request, 10)` waits for one)."""
    name = (model.call_name(call) or model.dotted(call.func) or "").rsplit(".", 1)[-1]
    if name in IN_FLIGHT_WAITS:
        return _waits_on_work_in_flight(model, call, name)
    if name not in WAIT_ONLY_CALLS:
        return False
    if name != "wait_for":
        return True
    awaited = call.args[0].value if call.args else None
    return isinstance(awaited, cst.Call) and only_waits(model, awaited)


def _waits_on_work_in_flight(model: ModuleModel, call: cst.Call, name: str) -> bool:
    """`f.result(timeout=60)`, `thread.join(5)`, `as_completed(fs, timeout=60)`: a wait given a
    time (a `timeout=`, or a number in its place; `", ".join(parts)` is none) for work made
    before the loop it is in: a future submitted in the same round is the work sent again."""
    if not given_a_time(model, call, 1 if name == "as_completed" else 0):
        return False
    awaited = call.args[0].value if name == "as_completed" and call.args else call.func
    if isinstance(awaited, cst.Attribute):
        awaited = awaited.value
    loop = next((a for a in model.ancestors(call) if isinstance(a, (cst.For, cst.While, cst.FunctionDef))), None)
    if not isinstance(loop, (cst.For, cst.While)):
        return True
    return isinstance(awaited, cst.Name) and awaited.value not in model.bound_inside(loop.body)


def given_a_time(model: ModuleModel, call: cst.Call, position: int | None = None) -> bool:
    """A wait told how long: a `timeout=`, an argument named for one (`poll_timeout`), a number at
    `position` (`thread.join(5)`; `", ".join(parts)` is none), a receiver or first argument whose
    timeout the function set (`sock.settimeout(5)`, then `sock.recv(n)` or `recv(sock, n)`), or
    a wait inside `asyncio.wait_for(..., timeout)`, which gives it that time."""
    for index, arg in enumerate(call.args):
        if arg.keyword is not None and arg.keyword.value == "timeout":
            return True
        if (model.dotted(arg.value) or "").lower().endswith("timeout"):
            return True
        if arg.keyword is None and index == position and isinstance(arg.value, (cst.Integer, cst.Float)):
            return True
    argument = model.parents.get(call)
    wrapper = model.parents.get(argument) if isinstance(argument, cst.Arg) else None
    if isinstance(wrapper, cst.Call) and (model.qualname(wrapper.func) or "") == "asyncio.wait_for":
        return len(wrapper.args) > 1 and model.module.code_for_node(wrapper.args[1].value) != "None"
    handed = [a.value for a in call.args[:1] if a.keyword is None and not a.star]
    receivers = {
        model.dotted(r) for r in (*([call.func.value] if isinstance(call.func, cst.Attribute) else []), *handed)
    }
    receivers.discard(None)
    function = model.enclosing_function(call)
    return (
        bool(receivers)
        and function is not None
        and any(
            isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and n.func.attr.value == "settimeout"
            and model.dotted(n.func.value) in receivers
            for n in model.iter_nodes(function)
        )
    )


def unwrap_await(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.expression if isinstance(expr, cst.Await) else expr


def tests_a_failed_answer(model: ModuleModel, test: cst.BaseExpression, counters: set[str]) -> bool:
    """The test finds the work failed: a success flag or `ok` found false (`not success`), a
    retryable test, or a status code compared with a transient one (`>= 500`, `== 429`) or
    found not to be a success (`!= 200`). Not `while ok and items:` (round while it works),
    not an attempt counter named `retry`, not `status_code == 202` (a poll's "not done yet")."""
    negated = [
        n.expression
        for n in (test, *model.iter_nodes(test))
        if isinstance(n, cst.UnaryOperation) and isinstance(n.operator, cst.Not)
    ]
    if any(says_failure(model, e, _ANSWER_WORDS, _NOTHING) and not model.names_read(e) & counters for e in negated):
        return True
    if not says_failure(model, test, _STATUS_CODE, _NOTHING):
        return False
    return says_failure(model, test, _NOTHING) or any(
        isinstance(node, cst.Comparison)
        and any(
            isinstance(c.operator, (cst.NotEqual, cst.NotIn))
            and any(
                _SUCCESS_STATUS.match(i.value)
                for i in (c.comparator, *model.iter_nodes(c.comparator))
                if isinstance(i, cst.Integer)
            )
            for c in node.comparisons
        )
        for node in (test, *model.iter_nodes(test))
    )


def goes_round_on_a_failed_answer(model: ModuleModel, loop: cst.While) -> bool:
    """`while not success and attempts < 5: success = post(...)`, `while r.status_code >= 500:
    r = session.post(...)`: the test reads what the work answered (a success flag, `ok`, a
    status code), bound from its call each pass, and the loop goes round because it failed.
    Not a wait for "ready" (`while not ready:`, `done = get(...)["done"]`), not a search: the
    call reads nothing else the loop changes (`n += 1; ok = post(name=f"{base}-{n}")`) and takes
    no next item (`post(json=records.pop())`); not a loop whose pass acts on success (`ok =
    cache.set(key, nx=True)`, then `if ok: send()`): its test was a lock's, not the work's."""
    counters = set(attempt_counters(model, loop))
    if not tests_a_failed_answer(model, loop.test, counters):
        return False
    tested = model.names_read(loop.test)
    scope = model.scope_of(loop)
    changed = {  # every name the loop binds
        name
        for name, bound in model.bindings.get(scope, {}).items()
        if any(model.is_inside(b.statement, loop) for b in bound)
    }
    nodes = loop_nodes(model, loop)
    for statement in loop.body.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if not isinstance(small, cst.Assign) or len(small.targets) != 1:
            continue
        target, value = small.targets[0].target, unwrap_await(small.value)
        if not isinstance(target, cst.Name) or target.value not in tested or _reads_readiness(model, value):
            continue
        while isinstance(value, cst.Attribute):  # `ok = session.put(...).ok`
            value = unwrap_await(value.value)
        if (
            not isinstance(value, cst.Call)
            or _takes_a_next_item(model, value)
            or _acts_on_success(model, nodes, target.value)
        ):
            continue
        if not model.names_read(value) & (changed - counters - {target.value}):
            return True
    return False


def _reads_readiness(model: ModuleModel, value: cst.BaseExpression) -> bool:
    """`session.get(url).json().get("done")`, `job.finished`: the answer says ready, not failed."""
    return any(
        isinstance(n, cst.SimpleString)
        and _READY.search(n.value)
        or isinstance(n, cst.Attribute)
        and _READY.search(n.attr.value)
        for n in (value, *model.iter_nodes(value))
    )


def _takes_a_next_item(model: ModuleModel, call: cst.Call) -> bool:
    """The work is waited on, or handed a new item each pass (`post(json=records.pop())`)."""
    if only_waits(model, call) or called_name(call) in NEXT_ITEM_CALLS:
        return True
    inner = [n for arg in call.args for n in (arg.value, *model.iter_nodes(arg.value)) if isinstance(n, cst.Call)]
    return any(called_name(n) in NEXT_ITEM_CALLS for n in inner)


def _acts_on_success(model: ModuleModel, nodes: list[cst.CSTNode], flag: str) -> bool:
    """`if ok: send(...)` in the loop: the pass that succeeds does the work."""
    return any(
        isinstance(n, cst.If)
        and flag in model.names_read(n.test)
        and not isinstance(n.test, cst.UnaryOperation)
        and any(isinstance(c, cst.Call) for c in model.iter_nodes(n.body))
        for n in nodes
    )


def names_a_state(model: ModuleModel, test: cst.BaseExpression, *states: re.Pattern[str]) -> bool:
    """The test names a state of the work, as a string or a name (`status == "processing"`,
    `row["pending"]`, `Status.COMPLETED`), by one of the `states` patterns."""
    return any(
        any(p.search(text) for p in states)
        for node in (test, *model.iter_nodes(test))
        for text in (
            string_value(node) or "" if isinstance(node, cst.SimpleString) else "",
            model.dotted(node) or "" if isinstance(node, (cst.Name, cst.Attribute)) else "",
        )
        if text
    )


def goes_round_after_success(model: ModuleModel, try_node: cst.Try | cst.TryStar, loop: cst.For | cst.While) -> bool:
    """A `continue` of this loop in the try's body that nothing the attempt gave decides (`await
    checkpoint(); continue`, or under `if self.connected:`): the loop goes round after the work
    succeeded, so it repeats on a schedule, and what its handler's `continue` waits for is the
    next round, not a retry. A test of a name the `try` binds or of a call (`if reply is None:`,
    `if r.get("error"):`) may be the attempt's failure: it sends a retry round."""
    own = set(loop_nodes(model, loop))
    made = model.bound_inside(try_node)
    for node in model.iter_nodes(try_node.body):
        if not isinstance(node, cst.Continue) or node not in own:
            continue
        ancestors = list(model.ancestors(node, until=try_node))
        if any(isinstance(a, (cst.ExceptHandler, cst.ExceptStarHandler)) for a in ancestors):
            continue  # an inner handler's: a failure goes round
        tests = [a.test for a in ancestors if isinstance(a, cst.If)]
        if not any(
            says_failure(model, test)
            or model.names_read(test) & made
            or any(isinstance(n, cst.Call) for n in (test, *model.iter_nodes(test)))
            for test in tests
        ):
            return True
    return False


def denies_done(model: ModuleModel, test: cst.BaseExpression) -> bool:
    """`not is_complete`, `not body["finished"]`: a "not yet" spelled as the negation of a word
    for work that is over (not of `ok` or `succeeded`: that denies an outcome, a failure)."""
    return any(
        isinstance(n, cst.UnaryOperation)
        and isinstance(n.operator, cst.Not)
        and any(OVER.match(word) for word in _words_spelt(model, n.expression))
        for n in (test, *model.iter_nodes(test))
    )


def _words_spelt(model: ModuleModel, expression: cst.BaseExpression) -> list[str]:
    """The whole words the names and strings of an expression spell (`is_complete`, `body["finished"]`):
    `already_sent` holds no `ready`."""
    found: list[str] = []
    for node in (expression, *model.iter_nodes(expression)):
        if isinstance(node, cst.Name):
            found += words_of(node.value)
        elif isinstance(node, cst.Attribute):
            found += words_of(node.attr.value)
        elif isinstance(node, cst.SimpleString):
            found += words_of(string_value(node) or "")
    return found


def tries_each_once(model: ModuleModel, loop: cst.For | cst.While, try_node: cst.Try | cst.TryStar) -> bool:
    """`url = pick(exclude=tried)`; `if url in tried: break`; `tried.add(url)`, then `try:
    connect(url)`: each round draws a candidate anew, keeps it with the ones tried and tests
    the collection against it (or hands the collection to the draw), so a failure moves on to
    another node, key or name (a failover, a search) and no round re-attempts another's work.
    Not where the attempt sends a write (here or in a helper of the module): a failover that
    charges the next node after a timeout may charge twice (IDM301 still judges it)."""
    kept_calls, drawn, tests = _candidate_facts(model, loop)
    keeps = [n for n in kept_calls if not model.is_inside(n, try_node)]
    if not keeps or sends_a_write_among(model, model.iter_nodes(try_node.body)):
        return False
    drawn_here = {name: value for name, (value, statement) in drawn.items() if not model.is_inside(statement, try_node)}
    worked_on = {n.value for n in model.iter_nodes(try_node.body) if isinstance(n, cst.Name)} & set(drawn_here)
    for node in keeps:
        kept, candidate = node.func.value.value, node.args[0].value.value  # type: ignore[attr-defined]
        if candidate not in worked_on:
            continue
        if kept in model.names_read(drawn_here[candidate]) or any(
            _tests_membership(test, candidate, kept) for test in tests if not model.is_inside(test, try_node)
        ):
            return True
    return False


def _candidate_facts(
    model: ModuleModel, loop: cst.For | cst.While
) -> tuple[list[cst.Call], dict[str, tuple[cst.BaseExpression, cst.CSTNode]], list[cst.Comparison]]:
    """Once per loop: its `kept.add(name)` calls, the names it binds to a call's value (with
    the statement), and its comparisons."""
    key = f"answers.candidates:{id(loop)}"
    found = model.memo.get(key)
    if found is None:
        nodes = loop_nodes(model, loop)
        kept_calls = [
            n
            for n in nodes
            if isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and n.func.attr.value in ("add", "append")
            and isinstance(n.func.value, cst.Name)
            and len(n.args) == 1
            and isinstance(n.args[0].value, cst.Name)
        ]
        drawn: dict[str, tuple[cst.BaseExpression, cst.CSTNode]] = {
            n.targets[0].target.value: (n.value, n)
            for n in (nodes if kept_calls else ())
            if isinstance(n, cst.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0].target, cst.Name)
            and isinstance(unwrap_await(n.value), cst.Call)
        }
        tests = [n for n in (nodes if kept_calls else ()) if isinstance(n, cst.Comparison)]
        found = model.memo[key] = (kept_calls, drawn, tests)
    return found


def _tests_membership(test: cst.Comparison, candidate: str, kept: str) -> bool:
    """`url in tried`, `url not in tried`."""
    return (
        isinstance(test.left, cst.Name)
        and test.left.value == candidate
        and any(
            isinstance(c.operator, (cst.In, cst.NotIn))
            and isinstance(c.comparator, cst.Name)
            and c.comparator.value == kept
            for c in test.comparisons
        )
    )


def works_on_next_item(model: ModuleModel, loop: cst.For | cst.While, try_node: cst.CSTNode) -> bool:
    """`item = heap.pop()` / `msg = queue.get()` before the try, and the attempt works on it
    (`_worked_on`): each pass handles a new item, so a failure moves on rather than
    re-attempting the same work."""
    body = try_node.body if isinstance(try_node, (cst.Try, cst.TryStar)) else try_node
    used = _worked_on(model, body)
    for name in used:
        for binding in model.bindings_of(model.scope_of(loop), name):
            value = binding.value
            if isinstance(value, cst.Await):
                value = value.expression
            if (
                isinstance(value, cst.Call)
                and model.is_inside(binding.statement, loop)
                and not model.is_inside(binding.statement, try_node)
                and (model.dotted(value.func) or "").rsplit(".", 1)[-1] in NEXT_ITEM_CALLS
                and not _names_what_it_gets(value)
            ):
                return True
    return False


def _worked_on(model: ModuleModel, body: cst.CSTNode) -> set[str]:
    """The names the attempt works on: what a call in it is handed positionally (`fetch(item)`,
    `get(curr["name"])`) or made on (`item.process()`); not a setting (`timeout=t`), nor what only
    a handler reads (`sleep(delay)`)."""
    found: set[str] = set()
    for node in model.iter_nodes(body):
        if isinstance(node, cst.Call):
            parts = [a.value for a in node.args if not (a.keyword and _SETTING.search(a.keyword.value))]
            parts += [node.func.value] if isinstance(node.func, cst.Attribute) else []
            found.update(name for part in parts for name in model.names_read(part))
        elif isinstance(node, cst.Assign):  # `host = mirror.host`, then `get(host)`
            found.update(model.names_read(node.value))
    return found - {n for n in found if _SETTING.search(n)}


def _names_what_it_gets(call: cst.Call) -> bool:
    """`session.get(url)`, `cache.get(key)`: a `get` told what to fetch gets that again each
    round (not `queue.get(True, 5)`, `queue.get(block, timeout)`, `consumer.poll(timeout)`: the
    next item whatever it is)."""
    name = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    return name in ("get", "read") and any(a.keyword is None and not _a_setting(a.value) for a in call.args)


def _a_setting(value: cst.BaseExpression) -> bool:
    """A number, `True`/`False`/`None` or a name for one (`timeout`, `block`): how to wait, not what
    to fetch."""
    if isinstance(value, cst.Name):
        return value.value in ("True", "False", "None") or bool(_SETTING.search(value.value))
    return isinstance(value, (cst.Integer, cst.Float))


# names of how long or whether to wait, not of what is fetched
_SETTING = re.compile(r"timeout|block|wait|interval|delay", re.IGNORECASE)


def says_an_outcome(model: ModuleModel, test: cst.BaseExpression, words: re.Pattern[str] | None = None) -> bool:
    """A test of how the work went rather than of whether it is ready: a failure, a status or
    an HTTP code (`r.status != 200`, `resp.error`), or an answer's key naming a failure (`if
    "error" in response:`, `data.get("errors")`)."""
    return (
        says_failure(model, test)
        or says_failure(model, test, words or _OUTCOME, _HTTP_CODE)
        or any(
            isinstance(n, cst.SimpleString) and _ERROR_KEY.match(string_value(n) or "")
            for n in (test, *model.iter_nodes(test))
        )
    )


# a value that names an outcome rather than a readiness: `r.status != 200`, `resp.error`
_OUTCOME = re.compile(r"^(status|error|errors|failed|failure)$", re.IGNORECASE)
_FAILED = re.compile(r"^(error|errors|failed|failure)$", re.IGNORECASE)
_HTTP_CODE = re.compile(r"^[1-5]\d\d$")
_ERROR_KEY = re.compile(r"^(error|errors|failed|failure|fault)$", re.IGNORECASE)  # not `status`: a poll reads it
