"""Request objects sent as they were handed in: `client.send(request)` where `request` is a
parameter annotated as an HTTP request (`request: httpx.Request`), or left unannotated and
named as one (`request`, `prepared_request`: then the receiver must be an HTTP client), or a
name made from one (`req = hooks.before_request(ctx, request)`), in the function or in one it
is nested in. The
method is the request's own, set by whoever built it: a generated client's `do_request` sends
whatever its callers in other modules built, a POST among them. And an options object handed
to a request call whose method it holds (`options.method`) gives the address too."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.http_methods import any_literal_method
from idemlint.analysis.model import positional
from idemlint.analysis.request_parts import names_an_address
from idemlint.knowledge.http import HTTP_REQUEST_TYPES, REQUEST_PARAMETER_NAMES

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def handed_request(model: ModuleModel, call: cst.Call) -> tuple[str, cst.FunctionDef, bool] | None:
    """(the parameter, the function it belongs to, whether only its name says it is a request)
    of the request object `call` sends."""
    sent = positional(call, 0)
    if sent is None or not isinstance(sent.value, cst.Name):
        return None
    name = sent.value.value
    bindings = [  # `req = None` first, then made: the made one says what it holds
        b
        for b in model.bindings_of(model.scope_of(call), name)
        if not (b.kind == "assign" and isinstance(b.value, cst.Name) and b.value.value == "None")
    ]
    candidates = {name}
    if len(bindings) == 1 and bindings[0].kind == "assign" and bindings[0].value is not None:
        made = bindings[0].value
        if isinstance(made, cst.Call) and any_literal_method(made):
            return None  # `httpx.Request("GET", ...)`: a request of its own, whatever it reads
        candidates = model.names_read(made)  # `req = hooks.before_request(ctx, request)`
    elif bindings and not all(b.kind == "param" for b in bindings):
        return None
    function = model.enclosing_function(call)
    while function is not None:
        for candidate in sorted(candidates):
            for binding in model.bindings_of(function, candidate):
                if binding.kind != "param":
                    continue
                annotation = binding.annotation
                if annotation is not None and model.qualname(annotation) in HTTP_REQUEST_TYPES:
                    return candidate, function, False
                if annotation is None and candidate in REQUEST_PARAMETER_NAMES:
                    return candidate, function, True
        parent = model.parents.get(function)
        function = model.enclosing_function(parent) if parent is not None else None
    return None


def gives_the_address(model: ModuleModel, call: cst.Call, holder: str) -> bool:
    """The object that holds the method gives the address too (`url=options.url`): a request's
    options, not a payment's `method` handed to some `*_request()` call."""
    return any(
        isinstance(a.value, cst.Attribute)
        and isinstance(a.value.value, cst.Name)
        and a.value.value.value == holder
        and names_an_address(model, a.value)
        for a in call.args
    )
