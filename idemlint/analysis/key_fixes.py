"""Fixes for keys made on every attempt (IDM001): move the key out of the loop, or make a
helper take the key it would make. Each builder returns None unless it can show the fix only
changes how often the key is made."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint.analysis.keys import fresh_value_name
from idemlint.analysis.model import ModuleModel

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.edits import FixPlan
    from idemlint.analysis.retry import RetryContext


def hoist_out_of_loop(
    model: ModuleModel, module: cst.Module, call: cst.Call, sink_value: cst.BaseExpression, context: RetryContext
) -> FixPlan | None:
    """Move the key's generation to just before the retry loop, only when that is provably
    the same computation done once: a loop (not a decorator or task), nothing between the
    key and the loop runs it per item (an inner loop, a comprehension, a lambda), and the
    moved expression is made only of key-making calls (`uuid4()`, `str()`, `.hex`...) and
    names the loop does not bind. Exactly the key expression moves, never the statement
    that sends it: `key = str(uuid4())` moves as it is, a key made inline in the call gets
    its own `idempotency_key` variable and the call stays where it was."""
    import libcst as cst

    from idemlint.analysis.edits import FixPlan, NodeEdit

    if context.kind not in ("loop", "iterator"):
        return None
    loop = context.node
    if _repeats_between(model, call, loop):
        return None
    scope = model.scope_of(loop)
    bound_in_loop = model.bound_inside(loop)
    statement = model.statement_of(call)
    line = model.parents.get(statement)
    if (
        isinstance(statement, cst.Assign)
        and not model.is_inside(sink_value, statement)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0].target, cst.Name)
        and isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
        and _runs_on_every_pass(model, line, loop)
    ):
        name = statement.targets[0].target.value
        if (
            not _is_key_expression(model, statement.value, bound_in_loop)
            or len(model.bindings_of(scope, name)) != 1
            or _read_before(loop, name, statement)
        ):
            return None
        code = module.code_for_node(line.with_changes(leading_lines=()))
        return FixPlan(
            (NodeEdit("delete_line", line), NodeEdit("insert_before", loop, code)),
            safe=True,
            description=f"generate {name} once, before the retry loop",
        )
    if model.is_inside(call, sink_value) and _is_key_expression(model, sink_value, bound_in_loop):
        name = "idempotency_key"
        if _mentions(scope, name):
            return None
        code = f"{name} = {module.code_for_node(sink_value)}\n"
        return FixPlan(
            (NodeEdit("replace", sink_value, name), NodeEdit("insert_before", loop, code)),
            safe=True,
            description=f"generate {name} once, before the retry loop",
        )
    return None


# Calls that only turn a key into text: moving them with the key changes nothing but when they run.
_KEY_FORMATTERS = frozenset({"str", "repr", "format", "hex"})
_KEY_METHODS = frozenset({"hex", "upper", "lower", "replace", "format", "strip", "encode", "decode", "zfill"})
_KEY_ATTRIBUTES = frozenset({"hex", "int", "urn", "bytes"})


def _is_key_expression(model: ModuleModel, expr: cst.BaseExpression, bound_in_loop: set[str]) -> bool:
    """Whether `expr` is made only of fresh-value calls, text formatting, literals and names
    the loop does not bind: evaluating it once before the loop has no other effect."""
    import libcst as cst

    from idemlint.analysis.model import iter_nodes

    call_funcs = set()
    for node in (expr, *iter_nodes(expr)):
        if isinstance(node, cst.Call):
            name = model.call_name(node)
            method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
            if fresh_value_name(model, node) is None and name not in _KEY_FORMATTERS and method not in _KEY_METHODS:
                return False
            call_funcs.add(node.func)
        elif isinstance(node, cst.Name):
            if node.value in bound_in_loop:
                return False
        elif isinstance(node, cst.Attribute):
            parent = model.parents.get(node)
            inside_callee = any(model.is_inside(node, f) for f in call_funcs) or (
                isinstance(parent, cst.Call) and parent.func is node
            )
            if not inside_callee and node.attr.value not in _KEY_ATTRIBUTES:
                return False
        elif isinstance(
            node,
            (
                cst.Subscript,
                cst.Await,
                cst.Yield,
                cst.NamedExpr,
                cst.Lambda,
                cst.ListComp,
                cst.SetComp,
                cst.DictComp,
                cst.GeneratorExp,
            ),
        ):
            return False
    return True


def _repeats_between(model: ModuleModel, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """Whether something between `node` and the retry loop runs it more than once per
    attempt (an inner loop over items, a comprehension) or at another time (a lambda, a def)."""
    import libcst as cst

    repeating = (
        cst.For,
        cst.While,
        cst.ListComp,
        cst.SetComp,
        cst.DictComp,
        cst.GeneratorExp,
        cst.Lambda,
        cst.FunctionDef,
        cst.ClassDef,
    )
    for ancestor in model.ancestors(node):
        if ancestor is loop:
            return False
        if isinstance(ancestor, repeating):
            return True
    return True


def _runs_on_every_pass(model: ModuleModel, line: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """The statement sits in the loop's body, directly or in a `try` or `with` body, so it
    runs unconditionally at the start of its block on every pass (not under an `if`)."""
    import libcst as cst

    for ancestor in model.ancestors(line):
        if ancestor is loop:
            return True
        if isinstance(ancestor, (cst.IndentedBlock, cst.Try, cst.With)):
            continue
        return False
    return False


def _read_before(loop: cst.CSTNode, name: str, statement: cst.CSTNode) -> bool:
    """`name` is mentioned in the loop before its assignment (in source order)."""
    import libcst as cst

    from idemlint.analysis.model import iter_nodes

    for node in iter_nodes(loop):
        if node is statement:
            return False
        if type(node) is cst.Name and node.value == name:
            return True
    return False


def _mentions(scope: cst.CSTNode, name: str) -> bool:
    import libcst as cst

    from idemlint.analysis.model import iter_nodes

    return any(type(n) is cst.Name and n.value == name for n in iter_nodes(scope, stop_at_functions=False))


def pass_key_to_helper(
    model: ModuleModel,
    module: cst.Module,
    call: cst.Call,
    helper: cst.FunctionDef,
    origin: cst.CSTNode,
    context: RetryContext,
) -> FixPlan | None:
    """Unsafe: the helper gains `idempotency_key=None` and uses it when given; the caller
    makes the key once, before the loop, and passes it. Only for a plain helper of this
    module that makes the key itself, from nothing local to it."""
    import libcst as cst

    from idemlint.analysis.edits import FixPlan, NodeEdit
    from idemlint.analysis.model import iter_nodes

    params = helper.params
    if context.kind not in ("loop", "iterator") or not model.is_inside(origin, helper):
        return None
    if (
        params.star_arg is not cst.MaybeSentinel.DEFAULT
        or params.kwonly_params
        or params.star_kwarg
        or params.posonly_params
    ):
        return None
    if any(p.name.value == "idempotency_key" for p in params.params) or any(a.star for a in call.args):
        return None
    helper_names = set(model.bindings.get(helper, {}))
    if any(type(n) is cst.Name and n.value in helper_names for n in (origin, *iter_nodes(origin))):
        return None
    if model.bindings_of(model.scope_of(call), "idempotency_key"):
        return None
    name = cst.Name("idempotency_key")
    tight = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    new_params = params.with_changes(params=[*params.params, cst.Param(name, default=cst.Name("None"), equal=tight)])
    new_call = call.with_changes(args=[*call.args, cst.Arg(name, keyword=name, equal=tight)])
    code = module.code_for_node(origin)
    guarded = f"idempotency_key or {code}"
    return FixPlan(
        (
            NodeEdit("replace", params, module.code_for_node(new_params)),
            NodeEdit("replace", origin, guarded if isinstance(model.parents.get(origin), cst.Arg) else f"({guarded})"),
            NodeEdit("replace", call, module.code_for_node(new_call)),
            NodeEdit("insert_before", context.node, f"idempotency_key = {code}\n"),
        ),
        safe=False,
        description=f"make the key once before the loop and pass it to {helper.name.value}()",
    )
