"""Where a value acts as an idempotency key, and which calls make values unfit for one.

A *sink* is an expression whose value is sent or stored as an idempotency key: a keyword
argument or dict key with a key name (`idempotency_key=`, `{"Idempotency-Key": ...}`,
`MessageDeduplicationId=`), `headers["Idempotency-Key"] = ...`, or an assignment to a
variable or attribute whose name says it holds one (`idempotency_key = ...`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import line_of, origin_calls, origin_nodes, runs_before
from idemlint.analysis.key_names import (
    NAME_BASED_UUIDS,
    content_of_name,
    is_identifier_literal,
    names_an_operation,
    picks_identifier,
)
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.knowledge.keys import (
    BODY_KEYWORDS,
    CLOCK_CALLS,
    CONTENT_NAMES,
    DIGEST_CALLS,
    DIGEST_PREFIXES,
    IDENTIFIER,
    KEY_NAMES,
    KEY_VARIABLE,
    RANDOM_CALLS,
    RANDOM_PREFIXES,
    REQUEST_ID_NAMES,
    SENDING_CALLS,
    SERIALISER_METHODS,
    SERIALISERS,
    normalise,
)
from idemlint.knowledge.orms import KEEPS_A_RECORD

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def fresh_value_name(model: ModuleModel, call: cst.Call) -> str | None:
    """`uuid.uuid4()` etc. when the call makes a new random value each time it runs."""
    name = model.call_name(call)
    if name is None:
        return None
    if name in RANDOM_CALLS:
        return RANDOM_CALLS[name]
    if name.startswith(RANDOM_PREFIXES) and not name.endswith(("seed", "Random", "SystemRandom")):
        return f"{name}()"
    if name in CLOCK_CALLS:
        return f"{name}()"  # a clock is new on every attempt too
    return None


def clock_name(model: ModuleModel, call: cst.Call) -> str | None:
    name = model.call_name(call)
    if name in CLOCK_CALLS and name != "uuid.uuid1":
        return f"{name}()"
    return None


def digest_name(model: ModuleModel, call: cst.Call) -> str | None:
    name = model.call_name(call)
    if name is None:
        return None
    if name in DIGEST_CALLS or name.startswith(DIGEST_PREFIXES) and not name.endswith(("compare_digest",)):
        return f"{name}()"
    return None


@dataclass(frozen=True)
class Sink:
    value: cst.BaseExpression  # the expression used as the key
    where: str  # "the Idempotency-Key header of requests.post"
    call: cst.Call | None  # the call the key is sent with, when known


class KeySinks:
    def __init__(self, model: ModuleModel, extra_names: Iterable[str] = ()) -> None:
        self.model = model
        self.names = KEY_NAMES | {normalise(n) for n in extra_names}
        self.sinks: list[Sink] = list(self._find())

    def is_key_name(self, name: str, sent: bool) -> bool:
        normal = normalise(name)
        return normal in self.names or sent and normal in REQUEST_ID_NAMES

    def _find(self) -> Iterator[Sink]:
        model = self.model
        for call in model.calls:
            callee = model.dotted(call.func) or "a call"
            for arg in call.args:
                if arg.keyword is not None and self.is_key_name(arg.keyword.value, sent=_sends(callee)):
                    yield Sink(arg.value, f"the {arg.keyword.value}= argument of {callee}()", call)
        for node in model.strings:
            parent = model.parents.get(node)
            # Only dict keys: evaluating every string (each part of a long implicit
            # concatenation again) is quadratic on generated files.
            if not isinstance(parent, cst.DictElement) or parent.key is not node:
                continue
            key = string_value(node)
            if key is None:
                continue
            target = self._receiving_call(parent)
            if self.is_key_name(key, sent=target is not None and _sends(model.dotted(target.func) or "")):
                where = f"the {key!r} key" + (f" sent by {model.dotted(target.func) or 'a call'}()" if target else "")
                yield Sink(parent.value, where, target)
        for subscript, value, _statement in model.subscript_assigns:
            elements = subscript.slice
            if len(elements) == 1 and isinstance(elements[0].slice, cst.Index):
                key = string_value(elements[0].slice.value)
                if key is not None and self.is_key_name(key, sent=_looks_like_request_data(model, subscript.value)):
                    yield Sink(value, f"the {key!r} entry of {model.dotted(subscript.value) or 'a dict'}", None)
        for scope_bindings in model.bindings.values():
            for name, bindings in scope_bindings.items():
                if not KEY_VARIABLE.search(name):
                    continue
                for binding in bindings:
                    if binding.kind in ("assign", "walrus", "augassign") and binding.value is not None:
                        yield Sink(binding.value, f"the variable {name}", None)
        for attribute, value, _statement in model.attribute_assigns:
            if KEY_VARIABLE.search(attribute.attr.value):
                yield Sink(value, f"the attribute {model.dotted(attribute) or attribute.attr.value}", None)

    def _receiving_call(self, element: cst.DictElement) -> cst.Call | None:
        """The call a dict literal is passed to, directly or through one variable."""
        model = self.model
        node: cst.CSTNode = element
        for ancestor in model.ancestors(element):
            if isinstance(ancestor, cst.Call) and node is not ancestor.func:
                return ancestor
            if isinstance(ancestor, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                break
            node = ancestor
        # `headers = {...}` then `post(url, headers=headers)`
        statement = model.statement_of(element)
        if isinstance(statement, cst.Assign) and len(statement.targets) == 1:
            target = statement.targets[0].target
            if isinstance(target, cst.Name):
                scope = model.scope_of(statement)
                for call in model.calls:
                    if model.scope_of(call) is not scope:
                        continue
                    for arg in call.args:
                        if isinstance(arg.value, cst.Name) and arg.value.value == target.value:
                            return call
        return None


# Calls that send their keyword arguments to another system (as opposed to loggers,
# which take `request_id=` too).
def _sends(callee: str) -> bool:
    return bool(SENDING_CALLS.search(callee))


def _looks_like_request_data(model: ModuleModel, container: cst.BaseExpression) -> bool:
    name = (model.dotted(container) or "").lower()
    return any(
        word in name
        for word in ("header", "payload", "body", "params", "data", "request", "json", "kwargs", "options", "message")
    )


def hashed_content(model: ModuleModel, digest: cst.Call, sink: Sink) -> str | None:
    """What request content a digest covers (`json.dumps(payload)`, `payload`), or None
    when it covers only stable identifiers (`order.id`, `f"refund-{refund.id}"`). A
    name-based UUID's name is judged by `key_names`: content unless it names the operation."""

    body = set()
    if sink.call is not None:
        for arg in sink.call.args:
            if arg.keyword is not None and arg.keyword.value in BODY_KEYWORDS:
                body.update(value_leaves(model, arg.value))
    named = model.call_name(digest) in NAME_BASED_UUIDS  # `uuid5(NS, name)`: its name decides
    if named and names_an_operation(model, digest):
        return None
    for arg in digest.args:
        for call in origin_calls(model, arg.value):
            name = model.call_name(call) or ""
            method = call.func.attr.value if isinstance(call.func, cst.Attribute) else ""
            serialised = call.args[0].value if call.args else None
            if name in SERIALISERS and not _identifiers_only(model, serialised):
                return f"{name}(...)"
            if method in SERIALISER_METHODS and method != "items" and name not in SERIALISERS:
                return f".{method}()"
        for leaf in value_leaves(model, arg.value):
            if leaf in body and not IDENTIFIER.search(leaf.rsplit(".", 1)[-1]):
                return f"the request body {leaf}"
            if leaf.rsplit(".", 1)[-1].lower() in CONTENT_NAMES:
                return leaf
    return content_of_name(model, digest, body) if named else None


def value_leaves(model: ModuleModel, expr: cst.BaseExpression) -> list[str]:
    """The variables and attribute chains a value is made of: `payload`, `order.id`,
    `request.body`; receivers of method calls count (`payload` in `payload.encode()`),
    function names and imported modules do not."""
    leaves = []
    for node in origin_nodes(model, expr):
        if not isinstance(node, (cst.Name, cst.Attribute)):
            continue
        parent = model.parents.get(node)
        if isinstance(parent, cst.Call) and parent.func is node:
            continue
        if isinstance(parent, cst.Subscript) and parent.value is node and picks_identifier(parent):
            continue  # payload["order_id"]: an id picked out of the content
        if isinstance(parent, cst.Attribute) and parent.value is node:
            grand = model.parents.get(parent)
            if not (isinstance(grand, cst.Call) and grand.func is parent):
                continue
            if parent.attr.value == "get" and grand.args and is_identifier_literal(grand.args[0].value):
                continue  # payload.get("order_id")
        if isinstance(parent, (cst.Arg,)) and parent.keyword is node:
            continue
        dotted = model.dotted(node)
        if dotted is None or dotted.split(".")[0] in model.imports:
            continue
        leaves.append(dotted)
    return leaves


def _identifiers_only(model: ModuleModel, expr: cst.BaseExpression | None) -> bool:
    """A dict, tuple or list literal whose values are all literals or id-like names."""
    if isinstance(expr, cst.Dict):
        values = [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
    elif isinstance(expr, (cst.Tuple, cst.List)):
        values = [e.value for e in expr.elements]
    else:
        return False
    for value in values:
        if isinstance(value, (cst.SimpleString, cst.Integer)):
            continue
        dotted = model.dotted(value)
        if dotted is None or not IDENTIFIER.search(dotted.rsplit(".", 1)[-1]):
            return False
    return True


# retries that start the function over: a name bound in it is gone when the next attempt runs
_RERUNS_THE_FUNCTION = frozenset({"decorator", "task", "recursive", "callable"})


def made_once_and_kept(model: ModuleModel, call: cst.Call, kind: str, retried: cst.CSTNode, sink: cst.CSTNode) -> bool:
    """The fresh value is stored only where its holder has none yet, and the next attempt finds
    it: in a loop (`retried`), `if key is None: key = str(uuid4())` where nothing else in the
    loop binds `key` (nor, for `row.key`, `row`); in a task or a decorated function (`kind`),
    which starts over, `if not row.key: row.key = uuid4(); row.save()`: the row's own save, one
    that stores the key, before the key is sent (`sink`) and in no transaction a failed attempt
    rolls back."""
    assign = _assigned_by(model, call)
    if assign is None or len(assign.targets) != 1:
        return False
    code = model.module.code_for_node
    target = assign.targets[0].target
    test = _guarding_if(model, assign)
    if test is None or not _tests_missing(code, test.test, code(target)):
        return False
    if kind in _RERUNS_THE_FUNCTION:
        if not isinstance(target, cst.Attribute) or not (model.is_inside(sink, test) or runs_before(model, test, sink)):
            return False
        lines = list(getattr(test.body, "body", ()))
        line = model.parents.get(assign)
        after = lines[lines.index(line) + 1 :] if line in lines else []
        acting = next((s for s in after if any(isinstance(n, cst.Call) for n in model.iter_nodes(s))), None)
        return acting is not None and any(  # the `if`'s next call is the save: nothing is sent first
            isinstance(n, cst.Call) and line_of(model, n) is acting and _keeps(model, n, target)
            for n in model.iter_nodes(acting)
        )
    if isinstance(target, cst.Name):
        bindings = model.bindings_of(model.scope_of(assign), target.value)
        return [b.statement for b in bindings if model.is_inside(b.statement, retried)] == [assign]
    root: cst.BaseExpression = target
    while isinstance(root, cst.Attribute):
        root = root.value
    writes = [
        n
        for n in model.iter_nodes(retried)
        if isinstance(n, cst.Assign) and any(code(t.target) == code(target) for t in n.targets)
    ]
    return isinstance(root, cst.Name) and root.value not in model.bound_inside(retried) and writes == [assign]


def _assigned_by(model: ModuleModel, call: cst.Call) -> cst.Assign | None:
    """The assignment whose value is the call, or the call wrapped (`str(uuid4())`, `uuid4().hex`)."""
    for ancestor in model.ancestors(call):
        if isinstance(ancestor, cst.Assign):
            return ancestor
        if not isinstance(ancestor, (cst.Call, cst.Arg, cst.Attribute)):
            return None
    return None


def _guarding_if(model: ModuleModel, assign: cst.Assign) -> cst.If | None:
    """The `if` whose body holds the assignment, on lines of its own or on the `if`'s line."""
    line = model.parents.get(assign)
    suite = line if isinstance(line, cst.SimpleStatementSuite) else model.parents.get(line) if line else None
    test = model.parents.get(suite) if suite is not None else None
    return test if isinstance(test, cst.If) and test.body is suite else None


def _tests_missing(code: Callable[[cst.CSTNode], str], test: cst.BaseExpression, holder: str) -> bool:
    """`not holder`, `holder is None`, `holder == None`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return code(test.expression) == holder
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        return (
            code(test.left) == holder
            and isinstance(target.operator, (cst.Is, cst.Equal))
            and isinstance(target.comparator, cst.Name)
            and target.comparator.value == "None"
        )
    return False


def _keeps(model: ModuleModel, call: cst.Call, holder: cst.Attribute) -> bool:
    """`row.save()` (or `asave()`) of the holder's row, storing the attribute (no `update_fields`
    that leaves it out), or a session's `commit()`; not inside `transaction.atomic()` or
    `session.begin()`, which a failure undoes."""
    func = call.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in KEEPS_A_RECORD:
        return False
    code = model.module.code_for_node
    if func.attr.value != "commit":
        if code(func.value) != code(holder.value):
            return False
        fields = next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == "update_fields"), None
        )
        named = {string_value(e.value) for e in getattr(fields, "elements", ())}
        if fields is not None and holder.attr.value not in named:
            return False
    function = model.enclosing_function(call)
    decorators = [code(d.decorator) for d in function.decorators] if function is not None else []
    blocks = [code(i.item) for a in model.ancestors(call) if isinstance(a, cst.With) for i in a.items]
    return not any(_UNDONE_ON_FAILURE.search(text) for text in (*decorators, *blocks))


# a transaction that a failed attempt rolls back, with what was saved in it
_UNDONE_ON_FAILURE = re.compile(r"\batomic\b|\.begin(?:_nested)?\(")
