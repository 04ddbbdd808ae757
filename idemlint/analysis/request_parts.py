"""What a request call says about itself: its HTTP method when written out, the address it is
sent to (as far as literals and module constants tell), whether it asks for an OAuth token."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.knowledge.http import WRITE_METHODS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def literal_method(call: cst.Call) -> str | None:
    """POST, PUT, PATCH or DELETE from `request("POST", url)`; None for reads and unknowns."""
    method = _any_literal_method(call)
    return method if method in WRITE_METHODS else None


def _any_literal_method(call: cst.Call) -> str | None:
    first = call.args[0].value if call.args and call.args[0].keyword is None else None
    method_arg = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "method"), first)
    value = string_value(method_arg) if method_arg is not None else None
    return value.upper() if value else None


_TOKEN_URL = re.compile(r"oauth2?/token|access_?token|/token/?$", re.IGNORECASE)


def asks_for_a_token(call: cst.Call, target: str | None) -> bool:
    """An OAuth token request: a token endpoint URL, or a `grant_type` in the body it posts."""
    if target and _TOKEN_URL.search(target):
        return True
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value in ("data", "json") and isinstance(arg.value, cst.Dict):
            if any(string_value(e.key) == "grant_type" for e in arg.value.elements if isinstance(e, cst.DictElement)):
                return True
    return False


def request_target(model: ModuleModel, call: cst.Call) -> str | None:
    url = next(
        (a.value for a in call.args if a.keyword is not None and a.keyword.value in ("url", "QueueUrl", "TopicArn")),
        None,
    )
    if url is None:
        plain = [a.value for a in call.args if a.keyword is None]
        if plain and string_value(plain[0]) and string_value(plain[0]).upper() in WRITE_METHODS:  # type: ignore[union-attr]
            plain = plain[1:]
        url = plain[0] if plain else None
    if url is None:
        return None
    text = static_text(model, url) or model.module.code_for_node(url)
    # a variable is no address: shown as a placeholder, as an f-string's fields are
    return f"{{{text}}}" if isinstance(url, (cst.Name, cst.Attribute)) and text == model.dotted(url) else text


def static_text(model: ModuleModel, expr: cst.BaseExpression) -> str | None:
    """A URL as far as it is known statically: literals, and module-level string constants
    filled into f-strings (`f"{API}/charges"` with `API = "https://psp.example"`); holes
    that stay unknown keep their `{...}`."""
    literal = string_value(expr)
    if literal is not None:
        return literal
    if isinstance(expr, cst.Name):
        bindings = model.bindings_of(model.module, expr.value)
        if len(bindings) == 1 and bindings[0].value is not None:
            return string_value(bindings[0].value)
        return None
    if isinstance(expr, cst.FormattedString):
        parts = []
        for part in expr.parts:
            if isinstance(part, cst.FormattedStringText):
                parts.append(part.value)
            elif isinstance(part, cst.FormattedStringExpression):
                known = static_text(model, part.expression) if isinstance(part.expression, cst.Name) else None
                parts.append(known if known is not None else "{" + model.module.code_for_node(part.expression) + "}")
        return "".join(parts)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.Add):
        left = static_text(model, expr.left)  # `BASE_URL + path`, `"https://api.example" + path`
        right = static_text(model, expr.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "{...}") + (right if right is not None else "{...}")
    return None
