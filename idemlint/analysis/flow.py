"""Where a value comes from, within one function.

Flow-insensitive on purpose: every assignment to a name in the function is a possible
origin. That keeps the analysis cheap and predictable; the rules compensate by asking
*where* an origin sits (inside or outside a retry context), not whether it dominates.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import Binding, ModuleModel

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

# Deep chains of assignments are rare; the bound keeps pathological files linear.
_MAX_VISITED = 400


def origin_calls(model: ModuleModel, expr: cst.BaseExpression) -> Iterator[cst.Call]:
    """Every call whose result can flow into `expr`: calls in the expression itself and,
    through names, in the values assigned to those names in the same function.
    Calls made inside lambdas or nested functions are not followed."""
    for node in origin_nodes(model, expr):
        if isinstance(node, cst.Call):
            yield node


def origin_names(model: ModuleModel, expr: cst.BaseExpression) -> Iterator[cst.Name]:
    """Every variable read on the way to `expr` (including parameters, which end the trail)."""
    for node in origin_nodes(model, expr):
        if isinstance(node, cst.Name) and is_load(model, node):
            yield node


def origin_nodes(model: ModuleModel, expr: cst.BaseExpression) -> Iterator[cst.CSTNode]:
    """Every node of `expr` and of the values assigned to the names it reads, in this function."""
    scope = model.scope_of(expr)
    seen_names: set[str] = set()
    seen_nodes: set[int] = set()
    pending: list[cst.CSTNode] = [expr]
    while pending and len(seen_nodes) < _MAX_VISITED:
        node = pending.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        for sub in _self_and_descendants(model, node):
            yield sub
            if isinstance(sub, cst.Name) and sub.value not in seen_names and is_load(model, sub):
                seen_names.add(sub.value)
                # A name the function never binds is a module-level name (a constant, usually).
                bindings = model.resolve(scope, sub.value)
                for binding in bindings:
                    if binding.value is not None and binding.kind not in ("param", "def"):
                        pending.append(binding.value)


def name_bindings(model: ModuleModel, name: cst.Name) -> list[Binding]:
    return model.bindings_of(model.scope_of(name), name.value)


def _self_and_descendants(model: ModuleModel, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    yield node
    if isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
        return
    yield from model.iter_nodes(node)


def is_load(model: ModuleModel, name: cst.Name) -> bool:
    """False for the attribute part of `a.b`, keyword names and other non-variable names
    (an assignment's target still counts: flow follows names, not their uses)."""
    parent = model.parents.get(name)
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, cst.Arg) and parent.keyword is name:
        return False
    return True


def runs_before(model: ModuleModel, earlier: cst.CSTNode, later: cst.CSTNode) -> bool:
    """The line holding `earlier` runs on every way to the line holding `later`: they share a
    block and it comes first there (directly, or before the statement around `later`)."""
    line, use_line = line_of(model, earlier), line_of(model, later)
    block = model.parents.get(line)
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)) or line is use_line:
        return False
    for current in (use_line, *model.ancestors(use_line)):
        if model.parents.get(current) is block:
            return current in body and line in body and body.index(line) < body.index(current)
    return False


def reached_from(model: ModuleModel, earlier: cst.CSTNode, later: cst.CSTNode) -> bool:
    """Every way on from the line holding `earlier` comes to the line holding `later`: that line
    follows it in its block or in one around it (`if make_default: clear_others()`, then the
    insert after the `if`), directly or in a `with` there; no statement on the way may leave
    (a `return`, `raise`, `break` or `continue` in any branch of it), a `try` it is left through
    has no handler that may leave, and a compound statement that only holds the later line (an
    `if`, a loop, a `try`) may skip it."""
    target = line_of(model, later)
    current = line_of(model, earlier)
    while True:
        block = model.parents.get(current)
        if isinstance(block, cst.If) and block.orelse is current:
            current = block  # an `elif`: a branch of the `if` statement around it
            continue
        body = getattr(block, "body", None)
        if isinstance(body, (list, tuple)) and current in body:
            for statement in body[body.index(current) + 1 :]:
                if statement is target:
                    return True
                if isinstance(statement, cst.With) and target in statement.body.body:
                    return _reaches_within(model, statement.body.body, target)
                if _may_leave(model, statement) or model.is_inside(target, statement):
                    return False
        owner = model.parents.get(block) if block is not None else None
        while owner is not None and not isinstance(owner, cst.BaseStatement):
            owner = model.parents.get(owner)  # an `else:` or an `except:` clause: on to its statement
        if owner is None or isinstance(owner, (cst.FunctionDef, cst.ClassDef)):
            return False
        if isinstance(owner, (cst.Try, cst.TryStar)) and any(
            _may_leave(model, part) for part in (*owner.handlers, owner.orelse, owner.finalbody) if part is not None
        ):
            return False  # a failure after `earlier` may end the function in a handler
        current = owner


def _reaches_within(model: ModuleModel, body: Sequence[cst.CSTNode], target: cst.CSTNode) -> bool:
    for statement in body:
        if statement is target:
            return True
        if _may_leave(model, statement):
            return False
    return False


def leaves(
    model: ModuleModel,
    node: cst.CSTNode,
    anywhere: tuple[type[cst.CSTNode], ...],
    outside_loops: tuple[type[cst.CSTNode], ...] = (),
) -> bool:
    """A statement of one of `anywhere`'s kinds in `node` (a `return`: not one of a function or
    class defined there), or of `outside_loops`' kinds not inside a loop of its own (a `break`
    in a nested loop leaves only that loop)."""
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, (*anywhere, *outside_loops)):
            return True
        if isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(current, (cst.For, cst.While)) and outside_loops:
            if any(isinstance(n, anywhere) for n in model.iter_nodes(current)):
                return True
            continue
        stack.extend(model.children_of(current))
    return False


def _may_leave(model: ModuleModel, node: cst.CSTNode) -> bool:
    """A `return` or `raise` anywhere in the statement, or a `break`/`continue` of its own."""
    return leaves(model, node, (cst.Return, cst.Raise), (cst.Break, cst.Continue))


def line_of(model: ModuleModel, node: cst.CSTNode) -> cst.CSTNode:
    """The statement line holding a node (a small statement's line, or the compound statement)."""
    statement = model.statement_of(node)
    if isinstance(statement, cst.BaseSmallStatement):
        return model.parents.get(statement, statement)
    return statement


def on_another_way(model: ModuleModel, node: cst.CSTNode, other: cst.CSTNode) -> bool:
    """`other` runs only where `node` did not: they sit in the two branches of one `if`
    (`if absent: row = make() else: row = load()`), or `node` in a `try` and `other` in one of
    its handlers (`try: row = load()` / `except Missing: row = make()`), with no loop around
    that statement to take both ways in one run."""
    around = {id(a) for a in model.ancestors(node)}
    below = other
    for owner in model.ancestors(other):
        if id(owner) in around:
            mine = next((a for a in model.ancestors(node) if model.parents.get(a) is owner), node)
            apart = (
                type(owner) is cst.If
                and {id(mine), id(below)} == {id(owner.body), id(owner.orelse)}
                or type(owner) is cst.Try
                and mine is owner.body
                and type(below) is cst.ExceptHandler
            )
            loops = (a for a in model.ancestors(owner, until=model.scope_of(owner)))
            return apart and not any(isinstance(a, (cst.For, cst.While)) for a in loops)
        below = owner
    return False


def just_created(model: ModuleModel, node: cst.CSTNode) -> bool:
    """`node` runs only under `if created:` (`post_save`'s flag for a row just inserted): a state
    written there is the row's first, and moves nothing back."""
    return only_when(model, node, "created")


def only_when(model: ModuleModel, node: cst.CSTNode, flag: str) -> bool:
    """`node` runs only under `if flag:` (`if created:`: only the run that made the row)."""
    return any(
        isinstance(ancestor, cst.If)
        and isinstance(ancestor.test, cst.Name)
        and ancestor.test.value == flag
        and model.is_inside(node, ancestor.body)
        for ancestor in model.ancestors(node)
    )
