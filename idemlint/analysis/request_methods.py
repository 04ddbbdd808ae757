"""Who names the HTTP method of a request core that is handed it (`def _request(self, method,
path)`): a caller in this module that makes it a POST or PATCH, or no caller here at all (a
generated client's core, called from other modules), where a retried request may be a POST; and
whether code outside a client class may send through its session (`sent_through_from_outside`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.direct_facts import own_params
from idemlint.analysis.model import ModuleModel, local_callee, positional_parameters
from idemlint.analysis.policy.common import caught_expression
from idemlint.analysis.retry.answers import says_failure
from idemlint.analysis.retry.exits import always_leaves
from idemlint.analysis.summaries import callers_naming_a_write, chosen_by
from idemlint.analysis.summary_records import Summary, passed_arguments
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.http import UNSENT_REQUEST_ERRORS
from idemlint.knowledge.repeats import names_a_lookup, words_of

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def caller_naming_a_write(model: ModuleModel, node: cst.CSTNode, parameter: str) -> tuple[cst.Call, str, str] | None:
    """The first call in this module that makes `parameter` of the function around `node` a POST
    or PATCH: (the call, `its_caller()`, the method)."""
    function = model.enclosing_function(node)
    if function is None:
        return None
    for writer, method in callers_naming_a_write(model, function, parameter):
        around = model.enclosing_function(writer)
        return writer, f"{around.name.value}()" if around is not None else "the module", method
    return None


def callers_are_elsewhere(
    model: ModuleModel, request: cst.Call, parameter: str, owner: cst.FunctionDef | None = None
) -> bool:
    """A request core whose method is its parameter and whose callers are all in other modules
    (a generated client's `HttpClient.request(path, method, ...)`): no call here gives the
    method, not even through functions that hand it on (`def request(self, method, path):
    return self._send(method, path)`); the function is not named for a read (`fetch`,
    `getResource`); and its retry is not only of a connection never made (`except
    httpx.ConnectError:` with no failed answer sending it round), so a POST may be re-sent."""
    function = owner or model.enclosing_function(request)  # `owner`: a closure's request is its parameter
    if function is None or names_a_lookup(words_of(function.name.value)):
        return False
    if local_callee(model, request) is function:
        return False  # `return self.request(path, method=method, retries=retries + 1)`: the retry itself
    if _given_here(model, function, parameter):
        return False  # a caller here says what it sends: judged by `callers_naming_a_write`
    return not _retries_only_unsent(model, request, function)


def _given_here(model: ModuleModel, function: cst.FunctionDef, parameter: str) -> bool:
    """Some call in this module gives `function`'s `parameter` a method: itself, or through
    callers that hand on their own parameter (a call that passes anything else counts as
    giving one; one that chooses by the method whether to call, `if method in SAFE:`, too)."""
    callers = _calls_by_callee(model)
    pending, seen = [(function, parameter)], {function}
    while pending:
        current, name = pending.pop()
        binding = Summary(params=tuple(positional_parameters(model, current)), verb_param=name, verb_effect=())
        for call in callers.get(current, ()):
            caller = model.enclosing_function(call)
            if caller is current:
                continue  # the recursion of a retry
            forwarded = binding.verb_binding(passed_arguments(call, own_params(caller) if caller else frozenset()))[1]
            if not forwarded or caller is None or chosen_by(model, call, forwarded):
                return True
            if caller not in seen:
                seen.add(caller)
                pending.append((caller, forwarded))
    return False


def _calls_by_callee(model: ModuleModel) -> dict[cst.FunctionDef, list[cst.Call]]:
    """The module's calls of its own functions, by the function called: built once per module."""
    found: dict[cst.FunctionDef, list[cst.Call]] | None = model.memo.get("calls_by_callee")
    if found is None:
        found = {}
        for call in model.calls:
            callee = local_callee(model, call)
            if callee is not None:
                found.setdefault(callee, []).append(call)
        model.memo["calls_by_callee"] = found
    return found


def _retries_only_unsent(model: ModuleModel, request: cst.Call, function: cst.FunctionDef) -> bool:
    """Every `try` around the request that goes round after a failure catches only errors
    raised before the request was sent (a handler that ends by raising, returning or breaking
    sends nothing round; a tuple of them may be named once), and no test of an answer sends it
    round either (`if response.status_code >= 500: continue`; one that raises does not)."""
    if any(
        isinstance(n, (cst.If, cst.While))
        and says_failure(model, n.test)
        and (isinstance(n, cst.While) or not always_leaves(list(n.body.body)))
        for n in model.iter_nodes(function.body)
    ):
        return False  # `if r.status_code >= 500: continue`; not `...: raise ServerError`
    handlers = [
        handler
        for attempt in model.ancestors(request)
        if isinstance(attempt, (cst.Try, cst.TryStar)) and model.is_inside(request, attempt.body)
        for handler in attempt.handlers
        if not always_leaves(list(handler.body.body))  # it raises, returns or breaks: nothing goes round
    ]
    return bool(handlers) and all(
        handler.type is not None
        and all(
            (model.qualname(e) or "") in UNSENT_REQUEST_ERRORS
            for e in caught_classes(caught_expression(model, handler))  # type: ignore[arg-type]
        )
        for handler in handlers
    )


def sent_through_from_outside(model: ModuleModel, owner: cst.ClassDef) -> bool:
    """Whether code outside the class may send through its session: a class of the module
    built on it (`class Orders(Client)`), or an attribute the class sets on `self` read on
    something else (`client.session.post(...)`)."""
    name = owner.name.value
    if any(any(model.dotted(b.value) == name for b in other.bases) for other in model.classes):
        return True
    own = {
        target.attr.value
        for target, _value, _statement in model.attribute_assigns
        if model.enclosing_class(target) is owner and model.dotted(target.value) == "self"
    }
    return any(
        isinstance(node, cst.Attribute)
        and node.attr.value in own
        and model.dotted(node.value) != "self"
        and not model.is_inside(node, owner)
        for node in model.iter_nodes(model.module, stop_at_functions=False)
    )
