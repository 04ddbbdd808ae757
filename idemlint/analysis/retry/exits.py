"""How a block ends: whether it leaves the loop, falls through, or goes round again.

Shared by loop classification, the loop policy reader and the database analysis.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import leaves
from idemlint.analysis.model import ModuleModel, local_callee, method_of
from idemlint.knowledge.retries import (
    NEVER_RETURNS_ATTRIBUTES,
    NEVER_RETURNS_NAMES,
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
    if isinstance(last, cst.Try) and last.handlers:
        # `try: raise Failed(last.stderr)` / `except AttributeError: raise Failed("...")`
        success = last.body.body if last.orelse is None else last.orelse.body.body
        return always_leaves(list(success), or_continues) and all(
            always_leaves(list(h.body.body), or_continues) for h in last.handlers
        )
    if isinstance(last, cst.With):
        return always_leaves(list(last.body.body), or_continues)
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


def runs_once(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """Every pass of the loop ends by leaving it and nothing in it goes round by a `continue`
    (`try: return run(cmd)` / `except Exception: sleep(5)`, then `raise Failed(...)`): whatever
    its header says, the first failure ends it, so nothing is retried."""
    return always_leaves(list(loop.body.body)) and not leaves(model, loop.body, (), (cst.Continue,))


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


def fails_the_loop_test(model: ModuleModel, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """After this handler the pass reaches its `while` test with a flag the pass cleared before
    its attempt, and nothing after the failure sets again (`while should_retry: try: should_retry
    = False; call() except Exception: log()`): a failure ends the loop, it does not go round."""
    attempt = model.parents.get(handler)
    block = model.parents.get(attempt) if attempt is not None else None
    loop = model.parents.get(block) if block is not None else None
    if not isinstance(attempt, (cst.Try, cst.TryStar)) or not isinstance(loop, cst.While):
        return False
    flags = _conjunct_flags(loop.test)
    siblings = list(loop.body.body)
    if attempt not in siblings:
        return False
    before = [*siblings[: siblings.index(attempt)], *attempt.body.body[:1]]
    cleared = {
        target.target.value
        for statement in before
        if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body
        if isinstance(small, cst.Assign) and isinstance(small.value, cst.Name)
        for target in small.targets
        if isinstance(target.target, cst.Name) and flags.get(target.target.value) == small.value.value
    }
    after = [
        handler.body,
        *([attempt.finalbody] if attempt.finalbody else []),
        *siblings[siblings.index(attempt) + 1 :],
    ]
    if any(isinstance(n, cst.Continue) for n in model.iter_nodes(handler.body)):
        return False
    scope = model.scope_of(loop)
    return any(
        not any(  # bound again on the way back to the test, by any form (`flag, delay = True, 1`, `flag: bool = True`)
            model.is_inside(binding.statement, block) for binding in model.bindings_of(scope, flag) for block in after
        )
        for flag in cleared
    )


def _conjunct_flags(test: cst.BaseExpression) -> dict[str, str]:
    """The names a `while` test needs true (`should_retry`, -> "False" clears it) or false
    (`not done`, -> "True" clears it), as conjuncts of an `and`."""
    if isinstance(test, cst.Name):
        return {test.value: "False"}
    if (
        isinstance(test, cst.UnaryOperation)
        and isinstance(test.operator, cst.Not)
        and isinstance(test.expression, cst.Name)
    ):
        return {test.expression.value: "True"}
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return {**_conjunct_flags(test.left), **_conjunct_flags(test.right)}
    return {}


def tries_going_round(model: ModuleModel, loop: cst.For | cst.While) -> list[cst.Try | cst.TryStar]:
    """The loop's own `try` statements with a handler that goes round (does not always leave)."""
    return [
        n
        for n in loop_nodes(model, loop)
        if isinstance(n, (cst.Try, cst.TryStar)) and any(not always_leaves(list(h.body.body)) for h in n.handlers)
    ]
