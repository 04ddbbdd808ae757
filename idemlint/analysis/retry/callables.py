"""Callables handed to something that calls them once per attempt.

`with_retries(lambda: client.refund(...))`, `tenacity.Retrying(...)(attempt)`,
`retry_call(send, ...)`: the helper calls its argument again on every attempt, so the
lambda's body, or the function passed by name, is retried as a whole, like a decorated
function's. Which argument a call hands over this way (`retried_argument`):

- the retry libraries' call forms: a retry decorator or `Retrying(...)` object called on a
  function (`tenacity.retry(stop=...)(fn)`, `backoff.on_exception(...)(fn)`,
  `Retrying(...)(fn, *args)`, also through a name bound to the decorator or object), and
  the `retry` package's `retry_call(fn, ...)`;
- a function of this module that calls one of its parameters inside a retry context (a
  retry loop of its own, its retry decorator, or another such call it forwards the
  parameter to): `called_parameter`;
- a function elsewhere in the project that does, from the project index (its position).

A value made while the call's arguments are evaluated is made once:
`with_retries(functools.partial(client.refund, key=str(uuid4())))` sends the same key on
every attempt; `functools.partial(attempt, order)` hands over `attempt`, whose body runs
per attempt.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, keyword, local_callee, method_of, positional, positional_parameters
from idemlint.analysis.retry.context import RetryContext
from idemlint.knowledge.retries import GENERATOR_BLIND, RETRY_DECORATORS, RETRY_ITERATORS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

# Called on a function, these return a wrapper that calls it once per attempt.
WRAPPERS = {
    **RETRY_DECORATORS,
    **{name: library for name, library in RETRY_ITERATORS.items() if name.endswith("Retrying")},
}
# The `retry` package's: call their first argument (or `f=`) once per attempt. Their settings
# are not in the decorator's order (`retry_call(f, fargs, fkwargs, exceptions, tries, ...)`), so
# their contexts name no library whose policy reader would misread them.
RETRY_CALLS = frozenset({"retry.api.retry_call", "retry.retry_call"})
# the library their contexts name: none whose policy reader would read their settings
RETRY_CALL = "retry_call"
_PARTIAL = {"functools.partial", "partial"}

# What a call hands over to be run once per attempt: (the argument, how messages name who runs
# it, the library whose policy reader reads the settings, the call holding them, if any)
Handed = tuple["cst.BaseExpression", str, str, "cst.Call | None"]


def makes_a_generator(model: ModuleModel, function: cst.FunctionDef | cst.Lambda) -> bool:
    """A `yield` in the function's own body (not in a function defined inside): calling it runs
    none of its code, it makes a generator (an async one under `async def`)."""
    if not isinstance(function, cst.FunctionDef):
        return False
    return any(type(node) is cst.Yield for node in model.iter_nodes(function.body))


class CallableRetries:
    """What hands a callable to be called once per attempt, for one module.

    `context_of` is the module's retry analysis as far as it is known (a helper's own loops
    come first); `at_position` gives the position of the argument a function defined
    elsewhere re-runs (the project index), or None."""

    def __init__(
        self,
        model: ModuleModel,
        context_of: Callable[[cst.CSTNode], RetryContext | None],
        at_position: Callable[[cst.Call], int | None] | None = None,
    ) -> None:
        self.model = model
        self.context_of = context_of
        self.at_position = at_position
        self._called: dict[cst.FunctionDef, int | None] = {}

    def contexts(self) -> list[RetryContext]:
        """A retry context for each lambda or function of this module handed to such a call."""
        found: list[RetryContext] = []
        seen: set[cst.CSTNode] = set()
        for call in self.model.calls:
            if not any(self._callable(arg.value) is not None for arg in call.args):
                continue  # what no call hands over needs no asking who calls it
            handed = self.retried_argument(call)
            target = self._callable(handed[0]) if handed is not None else None
            if handed is None or target is None or target in seen:
                continue
            _argument, label, library, config = handed
            if library in (*GENERATOR_BLIND, RETRY_CALL) and makes_a_generator(self.model, target):
                continue  # `tenacity.retry(...)(stream)`: the wrapper hands back the generator, retrying nothing
            seen.add(target)
            found.append(RetryContext("callable", library, target, config or call, config, label))
        return found

    def retried_argument(self, call: cst.Call) -> Handed | None:
        """The argument `call` calls once per attempt, and how messages name who does."""
        model = self.model
        func = call.func
        wrapper = func if isinstance(func, cst.Call) else _bound_call(model, func)
        if wrapper is not None:
            name = model.call_name(wrapper) or ""
            library = WRAPPERS.get(name)
            first = positional(call, 0)
            if library is not None and first is not None:
                return first.value, f"{name}()", library, wrapper
        name = model.call_name(call) or ""
        if name in RETRY_CALLS:
            given = keyword(call, "f") or positional(call, 0)
            return (given.value, f"{name.rsplit('.', 1)[-1]}()", RETRY_CALL, None) if given is not None else None
        written = model.dotted(func)
        if written is None:
            return None
        helper = local_callee(model, call)
        if helper is not None:
            position = self.called_parameter(helper)
            if position is None:
                return None
            parameter = positional_parameters(model, helper)[position]
            given = keyword(call, parameter) or positional(call, position)
        elif self.at_position is not None and (position := self.at_position(call)) is not None:
            given = positional(call, position)
        else:
            return None
        return (given.value, f"{written}()", "custom", None) if given is not None else None

    def called_parameter(self, function: cst.FunctionDef) -> int | None:
        """The position (after `self`/`cls`) of the parameter `function` calls once per
        attempt: inside a retry context of its own, or handed on to something that does."""
        if function in self._called:
            return self._called[function]
        self._called[function] = None  # a helper that hands the parameter to itself adds nothing
        names = positional_parameters(self.model, function)
        found = None
        for node in self.model.iter_nodes(function.body, stop_at_functions=False):
            if not isinstance(node, cst.Call):
                continue
            if (
                isinstance(node.func, cst.Name)
                and node.func.value in names
                and (context := self.context_of(node)) is not None
                and not context.idempotent_only  # the helper declines to repeat what is not safe to
                and not self._in_handler(node, function)  # `on_error(exc)`: a report per failure, not the attempt
            ):
                found = names.index(node.func.value)
                break
            handed = self.retried_argument(node)
            if handed is not None and isinstance(handed[0], cst.Name) and handed[0].value in names:
                found = names.index(handed[0].value)
                break
        self._called[function] = found
        return found

    def _in_handler(self, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
        for ancestor in self.model.ancestors(node):
            if ancestor is function:
                return False
            if isinstance(ancestor, (cst.ExceptHandler, cst.ExceptStarHandler)):
                return True
        return False

    def _callable(self, argument: cst.BaseExpression) -> cst.FunctionDef | cst.Lambda | None:
        """The lambda or function of this module an argument is: written in place, named
        (a nested or module-level function, a variable bound to a lambda, `self.method`), or
        the function a `functools.partial(...)` wraps."""
        model = self.model
        if isinstance(argument, cst.Lambda):
            return argument
        if isinstance(argument, cst.Call) and model.call_name(argument) in _PARTIAL and argument.args:
            inner = argument.args[0]
            return self._callable(inner.value) if inner.keyword is None and not inner.star else None
        if isinstance(argument, cst.Name):
            return _named(model, argument)
        if (
            isinstance(argument, cst.Attribute)
            and isinstance(argument.value, cst.Name)
            and argument.value.value in ("self", "cls")
        ):
            owner = model.enclosing_class(argument)
            return method_of(owner, argument.attr.value) if owner is not None else None
        return None


def _named(model: ModuleModel, name: cst.Name) -> cst.FunctionDef | cst.Lambda | None:
    """The function, or the lambda a variable holds, that `name` refers to: looked up from
    its own scope outwards; a parameter or any other value ends the search."""
    scopes: list[cst.CSTNode] = [model.scope_of(name)]
    scopes += [a for a in model.ancestors(scopes[0]) if isinstance(a, (cst.FunctionDef, cst.Lambda))]
    if scopes[-1] is not model.module:
        scopes.append(model.module)
    for scope in scopes:
        bindings = model.bindings_of(scope, name.value)
        if not bindings:
            continue
        if len(bindings) != 1:
            return None
        binding = bindings[0]
        if binding.kind == "def" and isinstance(binding.statement, cst.FunctionDef):
            return binding.statement
        if binding.kind == "assign" and isinstance(binding.value, cst.Lambda):
            return binding.value
        return None
    return None


def _bound_call(model: ModuleModel, func: cst.BaseExpression) -> cst.Call | None:
    """`retryer = Retrying(...)` (in the same function, or at module level) for `retryer(fn)`."""
    if not isinstance(func, cst.Name):
        return None
    bindings = model.resolve(model.scope_of(func), func.value)
    if len(bindings) == 1 and bindings[0].kind == "assign" and isinstance(bindings[0].value, cst.Call):
        return bindings[0].value
    return None
