"""How a block ends: whether it leaves the loop, falls through, or goes round again.

Shared by loop classification, the loop policy reader and the database analysis.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import leaves
from idemlint.analysis.model import ModuleModel, local_callee, method_of
from idemlint.analysis.retry.reach import catches_what_its_try_cannot_raise
from idemlint.analysis.retry.sends import sends_a_write_among
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.repeats import words_of
from idemlint.knowledge.retries import (
    EMPTY_CONTAINER_ERRORS,
    NEVER_RETURNS_ATTRIBUTES,
    NEVER_RETURNS_NAMES,
    NOT_FOUND_IN_ANSWER,
    NOT_READY_ERRORS,
    TAKE_METHODS,
    TAKE_VERBS,
    TIMED_TAKES,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def loop_nodes(model: ModuleModel, loop: cst.For | cst.While) -> list[cst.CSTNode]:
    """Nodes of the loop body, not descending into nested loops or functions."""
    return loop_nodes_of_block(model, loop.body)


def in_loop_body(model: ModuleModel, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """True when `node` sits in the loop's body, not in its iterator, test or else."""
    assert isinstance(loop, (cst.For, cst.While))
    return model.is_inside(node, loop.body)


def guarded_continue(statements: Sequence[cst.CSTNode]) -> bool:
    """A handler written "if it can be retried, go round; otherwise give up":
    `if retry.handle_retry(): continue` (or `if remaining: continue`) then `raise`/`return`.
    The test decides whether the work is attempted again, so it is a retry, and its bound."""
    if len(statements) < 2 or not always_leaves(statements):
        return False
    return any(
        isinstance(s, cst.If)
        and s.orelse is None
        and always_leaves(list(s.body.body), or_continues=True)
        and ends_with_continue(list(s.body.body))
        for s in statements[:-1]
    )


def always_leaves(statements: Sequence[cst.CSTNode], or_continues: bool = False) -> bool:
    """Whether a block always raises, returns or breaks (so it never re-attempts); with
    `or_continues`, a `continue` counts too (a guard that skips the rest of a pass)."""
    if not statements:
        return False
    last = statements[-1]
    leaving = (cst.Raise, cst.Return, cst.Break, cst.Continue) if or_continues else (cst.Raise, cst.Return, cst.Break)
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, leaving) or exits_the_process(s) for s in last.body)
    if isinstance(last, cst.BaseSmallStatement):  # the statements of `if done: return` on one line
        return any(isinstance(s, leaving) or exits_the_process(s) for s in statements)
    if isinstance(last, cst.If):
        if last.orelse is None:
            return False
        other = last.orelse
        other_body = [other] if isinstance(other, cst.If) else list(other.body.body)
        return always_leaves(list(last.body.body), or_continues) and always_leaves(other_body, or_continues)
    return False


def leaves_or_raises(model: ModuleModel, statements: Sequence[cst.CSTNode]) -> bool:
    """`always_leaves`, or the block ends by calling a function of this module that raises on
    every way through it (`if response.status_code >= 400: self._raise_error(response)`)."""
    if always_leaves(statements):
        return True
    last = statements[-1] if statements else None
    if not (isinstance(last, cst.SimpleStatementLine) and len(last.body) == 1 and isinstance(last.body[0], cst.Expr)):
        return False
    call = last.body[0].value
    callee = callee_here(model, call) if isinstance(call, cst.Call) else None
    return (
        callee is not None
        and always_raises(list(getattr(callee.body, "body", ())))
        and not any(isinstance(n, cst.Return) for n in model.iter_nodes(callee.body))  # no early way out
    )


def callee_here(model: ModuleModel, call: cst.Call) -> cst.FunctionDef | None:
    """`local_callee`, a function the caller defines in its own body (`def rethrow(): ...`), or
    a method `self.x()` finds in a base class this module defines."""
    found = local_callee(model, call)
    func = call.func
    if found is None and isinstance(func, cst.Name):
        nested = model.bindings_of(model.scope_of(call), func.value)
        if len(nested) == 1 and nested[0].kind == "def" and isinstance(nested[0].statement, cst.FunctionDef):
            return nested[0].statement
    owner = model.enclosing_class(call)
    seen: set[int] = set()
    while found is None and owner is not None and id(owner) not in seen and isinstance(func, cst.Attribute):
        seen.add(id(owner))
        if not (isinstance(func.value, cst.Name) and func.value.value in ("self", "cls")):
            return None
        bases = [model.module_defs.get(b.value.value) for b in owner.bases if isinstance(b.value, cst.Name)]
        owner = next((b for b in bases if isinstance(b, cst.ClassDef)), None)
        found = method_of(owner, func.attr.value) if owner is not None else None
    return found


def always_raises(statements: Sequence[cst.CSTNode]) -> bool:
    """The block ends by raising on every path (`raise`, or an `if`/`else` that both raise)."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.Raise):
        return True  # a one-line suite's own statement: `if x: raise`
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, cst.Raise) for s in last.body)
    if isinstance(last, cst.If) and last.orelse is not None:
        other = last.orelse
        other_body = [other] if isinstance(other, cst.If) else list(other.body.body)
        return always_raises(list(last.body.body)) and always_raises(other_body)
    if isinstance(last, cst.Try) and last.finalbody is not None:
        return always_raises(list(last.finalbody.body.body))  # `try: report() finally: raise`
    return False


def runs_once_per_loop(model: ModuleModel, node: cst.CSTNode, loop: cst.For | cst.While) -> bool:
    """`node` sits in a block of the loop that always leaves it once it has run (`if attempt ==
    last: report(); raise`, `except Fatal: notify(); return`): it runs on the way out, once per
    loop, not once per attempt. Not where a failure of `node` is caught inside the loop (a `try`
    around it, a `with` that may suppress it), nor where the block may go round instead (a
    `continue` in it). A `break` counts only where it breaks this loop."""
    chain: list[cst.CSTNode] = []
    for ancestor in model.ancestors(node):
        if ancestor is loop:
            break
        chain.append(ancestor)
    else:
        return False
    if any(isinstance(a, (cst.Try, cst.TryStar)) and a.body in chain or isinstance(a, cst.With) for a in chain):
        return False  # `try: return post()`, `with suppress(...)`: a failure here may go round
    for index, block in enumerate(chain):
        if not isinstance(block, cst.IndentedBlock) or block is loop.body:
            continue
        if any(isinstance(a, (cst.For, cst.While)) for a in chain[index + 1 :]):
            continue  # in a loop inside the retry: its `break` leaves that loop only
        if always_leaves(list(block.body)) and not any(
            isinstance(n, cst.Continue) for n in loop_nodes_of_block(model, block)
        ):
            return True
    return False


def loop_nodes_of_block(model: ModuleModel, block: cst.CSTNode) -> list[cst.CSTNode]:
    """Nodes of a block, not descending into nested loops or functions (their `continue`s and
    `break`s are their own)."""
    out: list[cst.CSTNode] = []
    stack = list(model.children_of(block))
    while stack:
        current = stack.pop()
        out.append(current)
        if not isinstance(current, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(model.children_of(current))
    return out


def tests_leaving_every_loop(model: ModuleModel, loop: cst.For | cst.While) -> list[cst.If]:
    """The `if`s in loops nested in `loop` whose branch raises or returns (`for email in batch:
    ... if tries >= MAX_ATTEMPTS: raise`), outside any `try` of `loop` that may catch it: they
    leave `loop` too, so they may bound it; a `break` there leaves only the inner loop."""
    found: list[cst.If] = []
    for inner in loop_nodes(model, loop):
        if not isinstance(inner, (cst.For, cst.While)):
            continue
        for node in model.iter_nodes(inner.body):
            if (
                isinstance(node, cst.If)
                and not any(
                    isinstance(a, cst.Try) and model.is_inside(node, a.body) for a in model.ancestors(node, loop)
                )
                and any(_raises_or_returns(model, branch) for branch in (node.body, node.orelse) if branch is not None)
            ):
                found.append(node)
    return found


def _raises_or_returns(model: ModuleModel, branch: cst.BaseSuite | cst.If | cst.Else) -> bool:
    suite = branch.body if isinstance(branch, cst.Else) else branch
    if not isinstance(suite, (cst.IndentedBlock, cst.SimpleStatementSuite)):
        return False  # an `elif`: its own `if` is judged on its own
    block = list(suite.body)
    last = block[-1] if block else None
    ends_in_break = isinstance(last, cst.Break) or (
        isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, cst.Break) for s in last.body)
    )
    return not ends_in_break and leaves_or_raises(model, block)


def exits_the_process(statement: cst.CSTNode) -> bool:
    """`sys.exit(1)`, `exit()`, `os._exit(2)`, flask's `abort(404)`: a call that never returns
    (it raises SystemExit or the HTTP error, or ends the process), so the block goes no further."""
    if not (isinstance(statement, cst.Expr) and isinstance(statement.value, cst.Call)):
        return False
    func = statement.value.func
    if isinstance(func, cst.Name) and func.value == "abort":
        return _aborts_with_a_status(statement.value)
    if isinstance(func, cst.Name):
        return func.value in NEVER_RETURNS_NAMES
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Name)
        and (func.value.value, func.attr.value) in NEVER_RETURNS_ATTRIBUTES
    )


def _aborts_with_a_status(call: cst.Call) -> bool:
    """`abort(404)`, `abort(HTTPStatus.CONFLICT, ...)`: a web framework's abort (flask's,
    werkzeug's, quart's, bottle's), known by the HTTP status it is given first; a project's own
    `abort(txn, reason)` may return."""
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    if isinstance(first, cst.Integer):
        return 100 <= first.evaluated_value <= 599
    return isinstance(first, cst.Attribute) and ("HTTP" in first.attr.value or _names_http_status(first.value))


def _names_http_status(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value in ("HTTPStatus", "status", "codes")


def ends_by_leaving(statements: Sequence[cst.CSTNode]) -> bool:
    """Whether a block's last statement leaves the loop (return or break) on every path."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Return, cst.Break)) for s in last.body)
    if isinstance(last, cst.With):
        return ends_by_leaving(list(last.body.body))  # tenacity: `with attempt: ...; return x`
    if isinstance(last, cst.If) and last.orelse is not None:
        other = last.orelse
        other_body = [other] if isinstance(other, cst.If) else list(other.body.body)
        return ends_by_leaving(list(last.body.body)) and ends_by_leaving(other_body)
    if isinstance(last, (cst.Try, cst.TryStar)):
        blocks = [last.body, *([last.orelse.body] if last.orelse is not None else [])]
        return any(ends_by_leaving(list(b.body)) for b in blocks)
    return False


def ends_with_continue(statements: Sequence[cst.CSTNode]) -> bool:
    last = statements[-1] if statements else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, cst.Continue) for s in last.body)


def ends_by_raising(statements: Sequence[cst.CSTNode]) -> bool:
    """A block that ends by raising (`if ...: raise X` on one line too)."""
    return _ends_with(statements, cst.Raise)


def ends_by_returning(statements: Sequence[cst.CSTNode]) -> bool:
    """A block that ends by returning (`if ready: return True`)."""
    return _ends_with(statements, cst.Return)


def _ends_with(statements: Sequence[cst.CSTNode], kind: type[cst.CSTNode]) -> bool:
    last = statements[-1] if statements else None
    if isinstance(last, cst.SimpleStatementLine):
        return bool(last.body) and isinstance(last.body[-1], kind)
    return isinstance(last, kind)


def leaves_loop(model: ModuleModel, block: cst.CSTNode) -> bool:
    """A `break` or `return` in `block` that leaves the loop holding it."""
    return leaves(model, block, (cst.Return,), (cst.Break,))


def leaves_after(model: ModuleModel, try_node: cst.CSTNode) -> bool:
    """`try: r = call() except X: continue` followed by `return r` / `break` in the loop."""
    parent = model.parents.get(try_node)
    if not isinstance(parent, cst.IndentedBlock):
        return False
    body = list(parent.body)
    index = next((i for i, s in enumerate(body) if s is try_node), -1)
    return ends_by_leaving(body[index + 1 :])


def goes_round_on_failure(model: ModuleModel, try_node: cst.Try | cst.TryStar) -> bool:
    """Some handler stays in the loop after a failure: not one that leaves, nor one that
    catches only "nothing there yet" (`except queue.Empty:`), which is waiting, not failing,
    nor one of what the `try` cannot raise."""
    return any(
        not always_leaves(handler.body.body)
        and not means_not_ready(model, handler)
        and not catches_what_its_try_cannot_raise(model, handler)
        for handler in try_node.handlers
    )


def means_not_ready(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """What the handler lets go round is "nothing there yet", not a failure: an empty queue
    (`except queue.Empty:`), or, on a request that only reads, an answer of 202 Accepted (`if
    exc.code != HTTPStatus.ACCEPTED: raise`: the server has the work in hand and not done)."""
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
    if all(name.lower() in ("timeout", "timeouterror") for name in names) and _only_takes_in_time(model, attempt):
        return True
    if all(name in NOT_FOUND_IN_ANSWER for name in names) and _searches_an_answer(model, attempt):
        return True
    if not all(name in EMPTY_CONTAINER_ERRORS for name in names):
        return False
    calls = [n for n in model.iter_nodes(attempt.body) if isinstance(n, cst.Call)]
    return any(isinstance(n.func, cst.Attribute) and n.func.attr.value in TAKE_METHODS for n in calls) or (
        len(calls) == 1 and _takes_alone(model, calls[0])
    )


def _only_takes_in_time(model: ModuleModel, attempt: cst.Try | cst.TryStar) -> bool:
    """The `try` waits to take something, for a time it was given (`drain_events(timeout=5)`,
    `consumer.poll(poll_timeout)`, `sock.recv(n)` after `sock.settimeout(...)`), and sends
    nothing: a timeout there is a wait that ended with nothing, not a request left unanswered."""
    calls = [n for n in model.iter_nodes(attempt.body) if isinstance(n, cst.Call)]
    takes = [c for c in calls if TIMED_TAKES.match((model.dotted(c.func) or "").rsplit(".", 1)[-1])]
    return bool(takes) and all(_given_a_time(model, c) for c in takes) and not sends_a_write_among(model, calls)


def _given_a_time(model: ModuleModel, call: cst.Call) -> bool:
    """A `timeout=`, an argument named for one (`poll_timeout`), or a receiver whose timeout the
    function set (`sock.settimeout(5)`)."""
    if any(
        (model.dotted(a.value) or "").lower().endswith("timeout") or (a.keyword and a.keyword.value == "timeout")
        for a in call.args
    ):
        return True
    receiver = model.dotted(call.func.value) if isinstance(call.func, cst.Attribute) else None
    function = model.enclosing_function(call)
    return (
        receiver is not None
        and function is not None
        and any(
            isinstance(n, cst.Call)
            and isinstance(n.func, cst.Attribute)
            and n.func.attr.value == "settimeout"
            and model.dotted(n.func.value) == receiver
            for n in model.iter_nodes(function)
        )
    )


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


def answers_bound(nodes: Iterable[cst.CSTNode]) -> set[str]:
    """The names the nodes bind to a call's answer (`snapshot = cloud.get_snapshot(id)`, `body =
    await fetch(url)`): what a round reads again."""
    return {
        target.value
        for n in nodes
        if isinstance(n, cst.Assign) and isinstance(n.value, (cst.Call, cst.Await))
        for t in n.targets
        if isinstance(target := t.target, cst.Name)
    }
