"""What an HTTP call's method is, where the code spells it: a literal (`request("POST", url)`,
`method="get"`), or a client's `get`. Shared by the request analyses and the loop classifier."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.knowledge.http import (
    ADDRESS_WORD,
    CLIENT_NAME,
    HTTP_MODULES,
    NOT_AN_HTTP_CLIENT,
    URL_OPENERS,
    URL_WORD,
    WRITE_METHODS,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def literal_method(call: cst.Call) -> str | None:
    """POST, PUT, PATCH or DELETE from `request("POST", url)`; None for reads and unknowns."""
    method = any_literal_method(call)
    return method if method in WRITE_METHODS else None


def any_literal_method(call: cst.Call) -> str | None:
    """The method a call names as a literal (`Request("GET", url)`, `method="post"`), upper-cased."""
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    method_arg = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "method"), first)
    value = string_value(method_arg) if method_arg is not None else None
    return value.upper() if value else None


def http_get(model: ModuleModel, call: cst.Call) -> bool:
    """A GET request through an HTTP client (`requests.get(url)`, `session.get(url)`,
    `client.request("GET", url)`; not a cache's, a store's or a session's `get`)."""
    if model.call_name(call) in URL_OPENERS:
        return _opens_a_plain_url(model, call)
    name = (model.call_name(call) or model.dotted(call.func) or "").rsplit(".", 1)[-1]
    if name not in ("get", "request") or not isinstance(call.func, cst.Attribute):
        return False
    receiver = model.qualname(call.func.value) or model.dotted(call.func.value) or ""
    last = receiver.rsplit(".", 1)[-1]
    client = receiver in HTTP_MODULES or CLIENT_NAME.search(last) is not None and not NOT_AN_HTTP_CLIENT.search(last)
    return client and (name == "get" or any_literal_method(call) == "GET")


def _opens_a_plain_url(model: ModuleModel, call: cst.Call) -> bool:
    """`urlopen(url)`, `urlopen(f"{base}/x", timeout=1)`: no body (`data`, or a second argument
    in its place), and the address a string or a name bound only to strings (or a parameter):
    not a `Request(...)`, which may carry a method."""
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) != 1 or any(a.keyword is not None and a.keyword.value == "data" for a in call.args):
        return False
    strings = (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString)
    target = positional[0].value
    if isinstance(target, strings):
        return True
    return isinstance(target, cst.Name) and all(
        b.value is None
        and bool(URL_WORD.search(target.value) or ADDRESS_WORD.search(target.value))  # named for an address
        or isinstance(b.value, (*strings, cst.BinaryOperation))
        for b in model.resolve(model.scope_of(call), target.value)
    )
