"""Who names the HTTP method of a request core that is handed it (`def _request(self, method,
path)`): a caller in this module that makes it a POST or PATCH, or no caller here at all (a
generated client's core, called from other modules), where a retried request may be a POST."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.direct_facts import own_params
from idemlint.analysis.model import ModuleModel, local_callee, positional_parameters
from idemlint.analysis.retry.answers import says_failure
from idemlint.analysis.summaries import callers_naming_a_write
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


def callers_are_elsewhere(model: ModuleModel, request: cst.Call, parameter: str) -> bool:
    """A request core whose method is its parameter and whose callers are all in other modules
    (a generated client's `HttpClient.request(path, method, ...)`): no call here binds the
    method, not even through functions that hand it on (`def request(self, method, path):
    return self._send(method, path)`); the function is not named for a read (`fetch`,
    `getResource`); and its retry is not only of a connection never made (`except
    httpx.ConnectError:` with no failed answer sending it round), so a POST may be re-sent."""
    function = model.enclosing_function(request)
    if function is None or names_a_lookup(words_of(function.name.value)):
        return False
    if local_callee(model, request) is function:
        return False  # `return self.request(path, method=method, retries=retries + 1)`: the retry itself
    if _bound_here(model, function, parameter, set()):
        return False  # a caller here says what it sends: judged by `callers_naming_a_write`
    return not _retries_only_unsent(model, request, function)


def _bound_here(model: ModuleModel, function: cst.FunctionDef, parameter: str, seen: set[cst.FunctionDef]) -> bool:
    """Some call in this module gives `function`'s `parameter` a method, itself or through a
    caller that hands on its own parameter; a call that passes something else is taken to bind it."""
    seen.add(function)
    binding = Summary(params=tuple(positional_parameters(model, function)), verb_param=parameter, verb_effect=())
    for call in model.calls:
        caller = model.enclosing_function(call)
        if local_callee(model, call) is not function or caller is function:
            continue
        method, forwarded = binding.verb_binding(passed_arguments(call, own_params(caller) if caller else frozenset()))
        if not forwarded or caller is None:
            return True
        if caller not in seen and _bound_here(model, caller, forwarded, seen):
            return True
    return False


def _retries_only_unsent(model: ModuleModel, request: cst.Call, function: cst.FunctionDef) -> bool:
    """Every handler of the `try` around the request catches only errors raised before it was
    sent, and no test of an answer (`if response.status_code >= 500: continue`) sends it round."""
    attempt = next((a for a in model.ancestors(request) if isinstance(a, (cst.Try, cst.TryStar))), None)
    if attempt is None or not model.is_inside(request, attempt.body):
        return False
    if any(isinstance(n, (cst.If, cst.While)) and says_failure(model, n.test) for n in model.iter_nodes(function.body)):
        return False
    return all(
        handler.type is not None
        and all((model.qualname(e) or "") in UNSENT_REQUEST_ERRORS for e in caught_classes(handler.type))
        for handler in attempt.handlers
    )
