"""Who names the HTTP method of a request core that is handed it (`def _request(self, method,
path)`): a caller in this module that makes it a POST or PATCH, or no caller here at all (a
generated client's core, called from other modules), where a retried request may be a POST."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, local_callee
from idemlint.analysis.summaries import callers_naming_a_write
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.http import UNSENT_REQUEST_ERRORS
from idemlint.knowledge.repeats import LOOKUP_WORDS

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


def callers_are_elsewhere(model: ModuleModel, request: cst.Call) -> bool:
    """A request core whose method is its parameter and whose callers are all in other modules
    (a generated client's `HttpClient.request(path, method, ...)`): no call here binds the
    method, the function is not named for a read (`fetch`, `get_page`), and its retry is not
    only of a connection never made (`except httpx.ConnectError:`), so a POST may be re-sent."""
    function = model.enclosing_function(request)
    if function is None or function.name.value.lstrip("_").split("_", 1)[0].lower() in LOOKUP_WORDS:
        return False
    if local_callee(model, request) is function:
        return False  # `return self.request(path, method=method, retries=retries + 1)`: the retry itself
    if any(local_callee(model, c) is function and model.enclosing_function(c) is not function for c in model.calls):
        return False  # a caller here says what it sends: judged by `callers_naming_a_write`
    attempt = next((a for a in model.ancestors(request) if isinstance(a, (cst.Try, cst.TryStar))), None)
    if attempt is None or not model.is_inside(request, attempt.body):
        return True
    return not all(
        handler.type is not None
        and all((model.qualname(e) or "") in UNSENT_REQUEST_ERRORS for e in caught_classes(handler.type))
        for handler in attempt.handlers
    )
