"""Whether a delay between attempts can vary: a delay built only from literals, names and
arithmetic is the same for every client (IDM202), one with a call, a parameter, a
jitter-named value or the server's `Retry-After` in it may not be."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.knowledge.retries import is_attempt_counter

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

_MATH = {
    "min",
    "max",
    "pow",
    "len",
    "int",
    "float",
    "round",
    "abs",
    "math.pow",
    "math.exp",
    "math.floor",
    "math.ceil",
    "range",
}
RANDOMISH = re.compile(r"random|jitter|uniform|randint|randrange|token|urandom|choice|gauss", re.IGNORECASE)
_SERVER_DELAY = re.compile(r"retry.?after|reset|ratelimit", re.IGNORECASE)


def deterministic_delay(model: ModuleModel, expr: cst.BaseExpression) -> bool:
    """A delay built only from literals, names and arithmetic: nothing random, nothing
    the server said (Retry-After), no helper whose result we cannot see."""
    fixed, parameters = _delay_parts(model, expr)
    return fixed and not parameters  # with a parameter the caller decides: it may well be jittered


def delay_parameter(model: ModuleModel, expr: cst.BaseExpression) -> str | None:
    """The one parameter a delay is otherwise deterministically computed from (`ms / 1000` in
    `def sleep(ms)`): the caller's argument decides whether the wait varies."""
    fixed, parameters = _delay_parts(model, expr)
    return next(iter(parameters)) if fixed and len(parameters) == 1 else None


def _delay_parts(model: ModuleModel, expr: cst.BaseExpression) -> tuple[bool, set[str]]:
    """(nothing in the delay varies, apart from parameters; the parameters it reads)."""
    parameters: set[str] = set()
    for node in origin_nodes(model, expr):
        if isinstance(node, cst.Call):
            name = model.call_name(node) or ""
            if name not in _MATH and not _config_read_with_number(node):
                return False, parameters
        if isinstance(node, cst.SimpleString) and _SERVER_DELAY.search(node.value):
            return False, parameters  # Retry-After: the server said how long
        if isinstance(node, cst.Name) and RANDOMISH.search(node.value) and not _bound_to_literal(model, node):
            return False, parameters  # a `jitter` parameter or global we cannot see
        if isinstance(node, cst.Name) and _SERVER_DELAY.search(node.value):
            return False, parameters
        if isinstance(node, cst.Name) and _is_parameter(model, node):
            parameters.add(node.value)
    return True, parameters


def has_random(model: ModuleModel, expr: cst.BaseExpression) -> bool:
    """Whether a countdown may be random: a call, a parameter, a jitter-named value."""
    return not deterministic_delay(model, expr)


def _is_parameter(model: ModuleModel, name: cst.Name) -> bool:
    parent = model.parents.get(name)
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return False
    if isinstance(parent, cst.Attribute) and parent.value is name:
        # `self.retry_delay`, `task.retry_backoff`: a setting read off an object the caller
        # passed, the same value on every attempt (a jitter-named one is caught above)
        chain: cst.CSTNode = parent
        while isinstance(model.parents.get(chain), cst.Attribute):
            chain = model.parents[chain]
        return isinstance(chain, cst.Attribute) and bool(RANDOMISH.search(model.dotted(chain) or ""))
    outer: cst.CSTNode = name
    while isinstance(model.parents.get(outer), cst.Attribute):
        outer = model.parents[outer]
    if isinstance(outer, cst.Attribute) and is_attempt_counter((model.dotted(outer) or "").rsplit(".", 1)[-1]):
        return False  # `self.request.retries`: an attempt counter, not a configured delay
    return any(b.kind == "param" for b in model.bindings_of(model.scope_of(name), name.value))


def _bound_to_literal(model: ModuleModel, name: cst.Name) -> bool:
    bindings = model.resolve(model.scope_of(name), name.value)
    return bool(bindings) and all(isinstance(b.value, (cst.Integer, cst.Float)) for b in bindings)


def _config_read_with_number(call: cst.Call) -> bool:
    """`kwargs.pop("delay", 0.5)` / `options.get("delay", 1)`: a setting with a numeric default."""
    if not isinstance(call.func, cst.Attribute) or call.func.attr.value not in ("pop", "get"):
        return False
    if len(call.args) != 2 or not isinstance(call.args[1].value, (cst.Integer, cst.Float)):
        return False
    key = string_value(call.args[0].value) or ""
    return not RANDOMISH.search(key)
