"""How a loop counts its attempts: the counters and flags it keeps, and the test that gives up
on the last one. A loop that keeps one and sleeps, or gives up, re-attempts the same work."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, iter_nodes
from idemlint.analysis.retry.exits import always_leaves, loop_nodes
from idemlint.analysis.retry.reach import in_unreachable_handler
from idemlint.analysis.syntax import conjuncts
from idemlint.knowledge.retries import is_attempt_counter

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def attempt_counters(model: ModuleModel, loop: cst.For | cst.While) -> list[str]:
    """`retry_counter += 1` in the loop body: an attempt counter the loop keeps (matched by
    whole words, so `entry` and `retrieved` are not counters)."""
    return [
        n.target.value
        for n in loop_nodes(model, loop)
        if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name) and is_attempt_counter(n.target.value)
    ]


def spends_an_attempt_flag(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """A counter of two kept as a flag: `can_retry = True` before the loop, and in it a give-up
    on the flag (`if not can_retry: return None`) and the flag spent (`can_retry = False`), never
    set back. A flag reset in the loop (`retried = False` after each message) bounds nothing."""
    nodes = loop_nodes(model, loop)
    tested = {
        name
        for n in nodes
        if isinstance(n, cst.If) and _gives_up(n.body)
        for name in model.names_read(n.test)
        if is_attempt_counter(name)
    }
    order = {node: index for index, node in enumerate(model.iter_nodes(model.scope_of(loop)))} if tested else {}
    for name in tested:
        inside = [_constant(n.value) for n in nodes if isinstance(n, cst.Assign) and _assigns(n, name)]
        before = [
            _constant(b.value)
            for b in model.bindings_of(model.scope_of(loop), name)
            if b.value is not None
            and not model.is_inside(b.statement, loop)
            and order.get(b.statement, -1) < order.get(loop, -1)
        ]
        spent = set(inside)
        if inside and len(spent) == 1 and None not in spent and before and spent.isdisjoint(before):
            return True
    return False


def _assigns(statement: cst.Assign, name: str) -> bool:
    return any(isinstance(t.target, cst.Name) and t.target.value == name for t in statement.targets)


def _constant(value: cst.BaseExpression) -> str | None:
    """`True`, `False`, `None` or a whole number, as written; None for anything else."""
    if isinstance(value, cst.Integer) or isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return value.value
    return None


def _gives_up(block: cst.BaseSuite) -> bool:
    """The block always returns, breaks or raises: on lines of its own, or after the colon (`if x: return`)."""
    if isinstance(block, cst.SimpleStatementSuite):
        return any(isinstance(s, (cst.Return, cst.Break, cst.Raise)) for s in block.body)
    return always_leaves(list(block.body))


def gives_up_on_last_attempt(model: ModuleModel, loop: cst.For | cst.While, counter_names: Sequence[str]) -> bool:
    """`if attempt == attempts: raise` / `if i < n: log else: raise`: an `if` that
    compares the attempt counter and raises on one branch."""
    names = set(counter_names)
    if isinstance(loop, cst.For):
        names |= {n.value for n in (loop.target, *model.iter_nodes(loop.target)) if isinstance(n, cst.Name)}
    if not names:
        return False
    for n in loop_nodes(model, loop):
        if isinstance(n, cst.If) and isinstance(n.test, cst.Comparison) and not in_unreachable_handler(model, n, loop):
            used = model.names_read(n.test)
            if not used & names:
                continue
            branches = [list(n.body.body)]
            if n.orelse is not None and not isinstance(n.orelse, cst.If):
                branches.append(list(n.orelse.body.body))
            for b in branches:
                last = b[-1] if b else None
                if isinstance(last, cst.SimpleStatementLine) and any(isinstance(x, cst.Raise) for x in last.body):
                    return True
    return False


def counted_down(loop: cst.While, nodes: Sequence[cst.CSTNode]) -> bool:
    """`while remaining:` (or `while not done and remaining:`) that spends its count (`remaining -= 1`) on every way round: at the top
    of the body, or in each handler of a `try` whose body always leaves, ahead of any
    `continue`. A count reset in the loop, spent by a computed amount (a float budget never
    hits zero) or skipped on one way round (a throttled answer that sleeps and goes round) is
    no bound."""
    return any(
        isinstance(part, cst.Name) and _spent_each_round(loop, nodes, part.value) for part in conjuncts(loop.test)
    )


def _spent_each_round(loop: cst.While, nodes: Sequence[cst.CSTNode], name: str) -> bool:
    spent: set[cst.CSTNode] = set()
    for node in nodes:
        if isinstance(node, cst.AugAssign) and isinstance(node.target, cst.Name) and node.target.value == name:
            if not (isinstance(node.operator, cst.SubtractAssign) and _positive_whole(node.value)):
                return False
            spent.add(node)
        elif isinstance(node, cst.AssignTarget) and isinstance(node.target, cst.Name) and node.target.value == name:
            return False  # reset in the loop
    if not spent:
        return False
    return _spends(loop.body.body, spent)


def _positive_whole(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Integer) and value.value.isdigit() and int(value.value) > 0


def _spends(block: Sequence[cst.CSTNode], spent: set[cst.CSTNode]) -> bool:
    """Every way out of `block` that goes round passes a statement in `spent` first."""
    for statement in block:
        line = statement.body if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(statement, cst.BaseSmallStatement):
            line = [statement]  # `while remaining: remaining -= 1` on one line
        if line is not None:
            if any(small in spent for small in line):
                return True  # spent here, ahead of whatever follows
            if any(isinstance(small, cst.Continue) for small in line):
                return False
        elif isinstance(statement, cst.Try):
            if always_leaves(list(statement.body.body)):
                return all(always_leaves(list(h.body.body)) or _spends(h.body.body, spent) for h in statement.handlers)
            if any(isinstance(n, cst.Continue) for n in iter_nodes(statement)):
                return False  # the attempt may go round without spending
            # every way through the `try` that does not leave goes on to what follows it
        elif any(isinstance(n, cst.Continue) for n in iter_nodes(statement)):
            return False  # a `continue` under an `if` ahead of the count
    return False


def stepped_names(nodes: Sequence[cst.CSTNode]) -> set[str]:
    """The names the loop steps in place (`attempt += 1`, `retryCount = retryCount + 1`)."""
    augmented = {n.target.value for n in nodes if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name)}
    return augmented | {name for n in nodes if (name := steps(n))}


def steps(node: cst.CSTNode) -> str | None:
    """The name `count = count + 1` (or `- 1`) steps by itself."""
    if not isinstance(node, cst.Assign) or len(node.targets) != 1 or not isinstance(node.targets[0].target, cst.Name):
        return None
    name = node.targets[0].target.value
    value = node.value
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
        if isinstance(value.left, cst.Name) and value.left.value == name and isinstance(value.right, cst.Integer):
            return name
    return None
