"""What the name of a name-based UUID is made of (`uuid.uuid5(NS, name)`, `uuid.uuid3`).

A name-based UUID is a hash of its name, so as an idempotency key it is what the name is:
one per operation when the name holds an identifier of the operation the caller owns
(`f"payout-{payout.id}"`, a client reference made once, `payload["order_id"]`), one per
content when it is made of the request's content only (`f"{payout.iban}:{payout.amount}"`),
and then two intended, identical operations collapse into one (IDM003, as a digest of the
body does: `keys.hashed_content` asks here first).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import is_load
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.knowledge.keys import CONTENT_NAMES, IDENTIFIER, SERIALISER_METHODS, SERIALISERS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

NAME_BASED_UUIDS = {"uuid.uuid3", "uuid.uuid5"}
_MAX_VISITED = 400  # as `flow.origin_nodes`: pathological chains of assignments stay linear
_FOLLOWED = ("assign", "augassign", "walrus")


def uuid_name(digest: cst.Call) -> cst.BaseExpression | None:
    """The `name` argument of `uuid5(namespace, name)`."""
    for arg in digest.args:
        if arg.keyword is not None and arg.keyword.value == "name":
            return arg.value
    positional = [a for a in digest.args if a.keyword is None and not a.star]
    return positional[1].value if len(positional) > 1 else None


def names_an_operation(model: ModuleModel, digest: cst.Call) -> bool:
    """The name includes an identifier of the operation: a variable or attribute named like
    one (`refund.id`, `order_id`, `payout.reference`), or one picked out of the content by
    its key (`payload["order_id"]`, `payload.get("order_id")`). What a serialiser call
    covers (`json.dumps(payload)`) is left to the digest's own check."""
    name = uuid_name(digest)
    return name is not None and _parts(model, name)[0]


def content_of_name(model: ModuleModel, digest: cst.Call, body: set[str]) -> str | None:
    """How a message names the content a name is made of (`a name made of payout.iban,
    payout.amount`), or None: the name holds no value, or one bare value we cannot see into
    (`uuid5(NS, name)`). Fields (`payout.amount`), the body sent with the key, variables
    named like content, or two values or more joined count as content."""
    name = uuid_name(digest)
    if name is None:
        return None
    identifier, leaves = _parts(model, name)
    if identifier or not leaves:
        return None
    content = [leaf for leaf in leaves if "." in leaf or leaf in body or leaf.lower() in CONTENT_NAMES]
    if not content and len(leaves) < 2:
        return None
    return f"a name made of {', '.join(leaves)}"


def _parts(model: ModuleModel, expr: cst.BaseExpression) -> tuple[bool, list[str]]:
    """(whether the value is made with an identifier, the variables and attribute chains it
    is made of), through the names assigned in the same function; not into what a serialiser
    call covers, nor into lambdas."""
    scope = model.scope_of(expr)
    leaves: dict[str, None] = {}
    pending: list[cst.CSTNode] = [expr]
    seen: set[int] = set()
    while pending and len(seen) < _MAX_VISITED:
        node = pending.pop()
        if id(node) in seen or isinstance(node, (cst.Lambda, cst.FunctionDef)):
            continue
        seen.add(id(node))
        if isinstance(node, cst.Subscript) and picks_identifier(node):
            return True, []
        if isinstance(node, cst.Call):
            if _is_identifier_getter(node):
                return True, []
            if _serialises(model, node):
                continue
        if isinstance(node, (cst.Name, cst.Attribute)) and _is_value(model, node):
            dotted = model.dotted(node)
            if dotted is not None and dotted.split(".")[0] not in model.imports:
                if IDENTIFIER.search(dotted.rsplit(".", 1)[-1]):
                    return True, []
                bindings = (model.resolve(scope, dotted)) if isinstance(node, cst.Name) else []
                followed = [b.value for b in bindings if b.kind in _FOLLOWED and b.value is not None]
                if followed:
                    pending.extend(followed)  # `name = f"..."`: what it was made of
                    continue
                leaves[dotted] = None
            if isinstance(node, cst.Attribute):
                continue  # `payout.amount` is one value, not `payout` and `amount`
        pending.extend(reversed(model.children_of(node)))
    return False, list(leaves)


def _is_value(model: ModuleModel, node: cst.Name | cst.Attribute) -> bool:
    """A variable or attribute chain read as a value: not a called function, a keyword's name,
    or the attribute part of `a.b`."""
    parent = model.parents.get(node)
    if isinstance(parent, cst.Call) and parent.func is node:
        return False
    if isinstance(parent, cst.Attribute) and parent.value is node:
        grand = model.parents.get(parent)  # `a.b` is read whole at its outermost node, but
        return isinstance(grand, cst.Call) and grand.func is parent  # `payout` in `payout.encode()` counts
    return not isinstance(node, cst.Name) or is_load(model, node)


def _is_identifier_getter(call: cst.Call) -> bool:
    """`payload.get("order_id")`."""
    func = call.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "get"
        and bool(call.args)
        and is_identifier_literal(call.args[0].value)
    )


def _serialises(model: ModuleModel, call: cst.Call) -> bool:
    """`json.dumps(...)`, `repr(...)`, `payload.model_dump_json()`: the whole request."""
    method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
    return (model.call_name(call) or "") in SERIALISERS or method in SERIALISER_METHODS


def is_identifier_literal(expr: cst.BaseExpression) -> bool:
    text = string_value(expr)
    return text is not None and bool(IDENTIFIER.search(text))


def picks_identifier(subscript: cst.Subscript) -> bool:
    index = subscript.slice[0].slice if len(subscript.slice) == 1 else None
    return isinstance(index, cst.Index) and is_identifier_literal(index.value)
