"""Whether a delay between attempts can vary: a delay built only from literals, names and
arithmetic is the same for every client (IDM202), one with a call, a parameter, a
jitter-named value, the server's `Retry-After` or an attribute of the error a handler caught
(`countdown=busy.countdown`: the raiser chose it) in it may not be."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.scopes import source_order
from idemlint.analysis.flow import is_load, runs_before
from idemlint.analysis.model import ModuleModel, class_attributes, string_value
from idemlint.knowledge.retries import is_attempt_counter

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import Binding
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

# Whether a call returns a setting, the same on every call (`config.get_delay_ms()` where the
# method returns `self.delay_ms`): the project's summaries know; without them a call may vary.
SettingCall = Callable[["cst.Call"], bool]


def no_setting(_call: cst.Call) -> bool:
    return False


def deterministic_delay(model: ModuleModel, expr: cst.BaseExpression, setting: SettingCall = no_setting) -> bool:
    """Whether some way through the function gives the delay a value built only from
    literals, names and arithmetic: nothing random, nothing the server said (Retry-After),
    no helper whose result we cannot see. `wait = 2 ** n` overridden by `Retry-After` only
    when the server sends one is fixed whenever it does not."""
    return any(fixed and not parameters for fixed, parameters in _outcomes(model, expr, {}, setting))


def fixed_on_every_way(model: ModuleModel, expr: cst.BaseExpression, setting: SettingCall = no_setting) -> bool:
    """No way through the function makes the delay vary or lets the server set it: only then
    may a fix wrap it in jitter (a jittered `Retry-After` would retry before the server said)."""
    outcomes = _outcomes(model, expr, {}, setting)
    return bool(outcomes) and all(fixed and not parameters for fixed, parameters in outcomes)


def delay_parameter(model: ModuleModel, expr: cst.BaseExpression) -> str | None:
    """The one parameter a delay is otherwise deterministically computed from (`ms / 1000` in
    `def sleep(ms)`): the caller's argument decides whether the wait varies."""
    outcomes = _outcomes(model, expr, {}, no_setting)
    if any(fixed and not parameters for fixed, parameters in outcomes):
        return None
    return next((next(iter(p)) for fixed, p in sorted(outcomes, key=str) if fixed and len(p) == 1), None)


# One way a delay can be computed: (nothing in it varies, apart from parameters; the
# parameters it reads). A delay's outcomes are the ways it can take (`a or b`, `x if c else
# y`, the assignments that reach it); a compound value combines its parts' outcomes.
_Outcome = tuple[bool, frozenset[str]]
_VARIES: frozenset[_Outcome] = frozenset({(False, frozenset())})
_PLAIN: frozenset[_Outcome] = frozenset({(True, frozenset())})
_MAX_OUTCOMES = 8
_MAX_FOLLOWED = 64
# each assignment's outcomes (by id of its value), judged once per delay
_Memo = dict[int, frozenset[_Outcome]]


def _outcomes(
    model: ModuleModel, node: cst.CSTNode, following: _Memo, setting: SettingCall, whole: bool = True
) -> frozenset[_Outcome]:
    """The ways `node` can be computed; `whole` when it is the delay itself (or a value
    assigned to it), not a part of one. `following`: the assignments judged so far, each
    once (`d = d + d` repeated is not judged twice per line), so `d = d * 2` round a loop ends."""
    if isinstance(node, cst.BooleanOperation):
        return _outcomes(model, node.left, following, setting, whole) | _outcomes(
            model, node.right, following, setting, whole
        )
    if isinstance(node, cst.IfExp):
        if RANDOMISH.search(" ".join(model.names_read(node.test))):
            return _VARIES  # `delay if not jitter else ...`: a jitter switch the caller sets
        return _outcomes(model, node.body, following, setting, whole) | _outcomes(
            model, node.orelse, following, setting, whole
        )
    if whole and _is_no_delay(node):
        return frozenset()  # `delay = None` / `0` before the real value: not a wait
    if isinstance(node, cst.Call) and setting(node):
        return _PLAIN  # a setting read through a method: its receiver and arguments do not change it
    result = _leaf(model, node)
    if not _may_be_fixed(result) or isinstance(node, (cst.Lambda, cst.FunctionDef, cst.ClassDef)):
        return result
    if isinstance(node, cst.Name) and is_load(model, node):
        result = _combine(result, _bound_values(model, node, following, setting))
    for child in model.children_of(node):
        if not _may_be_fixed(result):
            break
        result = _combine(result, _outcomes(model, child, following, setting, whole=False))
    return result


def _may_be_fixed(outcomes: frozenset[_Outcome]) -> bool:
    return any(fixed for fixed, _parameters in outcomes)


def _leaf(model: ModuleModel, node: cst.CSTNode) -> frozenset[_Outcome]:
    """What one node contributes by itself."""
    if isinstance(node, cst.Attribute) and isinstance(node.value, cst.Name) and _raiser_chose(model, node):
        return _VARIES  # `countdown=busy.countdown`: the raiser chose the delay, out of sight here
    if isinstance(node, cst.Call):
        name = model.call_name(node) or ""
        if name not in _MATH and not _config_read_with_number(node):
            return _VARIES
    if isinstance(node, cst.SimpleString) and _SERVER_DELAY.search(node.value):
        return _VARIES  # Retry-After: the server said how long
    if isinstance(node, cst.Name):
        if RANDOMISH.search(node.value) and not _bound_to_literal(model, node):
            return _VARIES  # a `jitter` parameter or global we cannot see
        if _SERVER_DELAY.search(node.value):
            return _VARIES
        if _is_parameter(model, node):
            return frozenset({(True, frozenset({node.value}))})
    return _PLAIN


def _raiser_chose(model: ModuleModel, attribute: cst.Attribute) -> bool:
    """`busy.countdown` where a handler around it caught `busy` (`except Busy as busy:`): the
    value the code that raised it chose, unless the module's class of it sets the attribute in
    its own body (`class Throttled(Exception): wait = 60`), the same for every error."""
    name = attribute.value.value if isinstance(attribute.value, cst.Name) else ""
    for handler in model.ancestors(attribute):
        if isinstance(handler, cst.ExceptHandler) and handler.name is not None:
            if getattr(handler.name.name, "value", None) != name:
                continue
            caught = model.dotted(handler.type) if handler.type is not None else None
            return not any(
                owner.name.value == caught and attribute.attr.value in class_attributes(owner)
                for owner in model.classes
            )
    return False


def _bound_values(model: ModuleModel, name: cst.Name, following: _Memo, setting: SettingCall) -> frozenset[_Outcome]:
    """The outcomes of the assignments that may reach `name`: each plain assignment is one
    way; `d *= 2` and its kind change every way. A value chosen under a jitter switch
    (`if self.jitter: d = random...`) is the caller's to decide: it varies."""
    bindings = [b for b in model.resolve(model.scope_of(name), name.value) if b.value is not None]
    bindings = [b for b in bindings if b.kind not in ("param", "def")]
    if not bindings:
        return _PLAIN
    if len(following) > _MAX_FOLLOWED:
        return _VARIES  # too long a history to judge: unknown is never a finding
    reaching = _reaching(model, bindings, name)
    if any(_under_jitter_switch(model, b.statement) for b in reaching):
        return _VARIES

    def value_of(binding: Binding) -> frozenset[_Outcome]:
        key = id(binding.value)
        if key not in following:
            following[key] = _PLAIN  # round a loop back to it while it is judged: adds nothing
            following[key] = _outcomes(model, binding.value, following, setting)  # type: ignore[arg-type]
        return following[key]

    ways: frozenset[_Outcome] = frozenset()
    for binding in reaching:
        if binding.kind != "augassign":
            ways |= value_of(binding)
    if not ways:
        ways = _PLAIN
    for binding in reaching:
        if binding.kind == "augassign":
            ways = _combine(ways, value_of(binding))
    return ways


def _reaching(model: ModuleModel, bindings: list[Binding], use: cst.CSTNode) -> list[Binding]:
    """The bindings not overwritten on every way to `use`: when a plain assignment runs on
    every way to it (earlier in a block that holds it), only that one and those between it and
    `use` reach; one before it, or after `use` (round a loop), passes it first."""
    plain = [b for b in bindings if b.kind != "augassign"]
    dominating = [b for b in plain if runs_before(model, b.statement, use)]
    if not dominating:
        return bindings
    # the dominating assignment closest to `use`: every other one runs before it
    order = source_order(model, model.scope_of(use))
    last = max(dominating, key=lambda b: order.get(b.statement, -1))
    start, end = order.get(last.statement, -1), order.get(use, -1)
    # an assignment holding `use` (`d = max(floor, d)`) runs after it reads: not between
    return [
        b
        for b in bindings
        if b is last or start < order.get(b.statement, -1) < end and not model.is_inside(use, b.statement)
    ]


def _under_jitter_switch(model: ModuleModel, statement: cst.CSTNode) -> bool:
    return any(
        isinstance(a, cst.If) and RANDOMISH.search(" ".join(model.names_read(a.test)))
        for a in model.ancestors(statement)
    )


def _is_no_delay(node: cst.CSTNode) -> bool:
    if isinstance(node, cst.Name):
        return node.value == "None"
    return isinstance(node, (cst.Integer, cst.Float)) and not node.value.strip("0._")


def _combine(left: frozenset[_Outcome], right: frozenset[_Outcome]) -> frozenset[_Outcome]:
    """Both parts together: fixed only if both are, reading both's parameters."""
    combined = frozenset((a and b, pa | pb) for a, pa in left for b, pb in right)
    if len(combined) > _MAX_OUTCOMES:
        return _VARIES if not any(f and not p for f, p in combined) else _PLAIN
    return combined


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
