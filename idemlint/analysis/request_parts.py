"""What a request call says about itself: its HTTP method when written out, the address it is
sent to (as far as literals and module constants tell), whether it asks for an OAuth token."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.knowledge.http import RELATIVE_CHANGE_KEY, REPEAT_SAFE_ENDPOINT_WORDS, WRITE_METHODS

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


def url_argument(call: cst.Call) -> cst.BaseExpression | None:
    """The address a request is sent to: `url=` (an AWS queue's or topic's), else the first
    positional argument after a written-out method (`request("POST", url)`)."""
    url = next(
        (a.value for a in call.args if a.keyword is not None and a.keyword.value in ("url", "QueueUrl", "TopicArn")),
        None,
    )
    if url is None:
        plain = [a.value for a in call.args if a.keyword is None]
        if plain and (string_value(plain[0]) or "").upper() in WRITE_METHODS:
            plain = plain[1:]
        url = plain[0] if plain else None
    return url


def request_target(model: ModuleModel, call: cst.Call) -> str | None:
    url = url_argument(call)
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


_WORD = re.compile(r"[A-Za-z]+")


def repeat_safe_endpoint(model: ModuleModel, call: cst.Call) -> bool:
    """The call declares itself idempotent (`idempotent=True`, as some clients let a caller
    say), or the request's path or the name of the function that makes it says a repeat
    changes nothing more (`/unlink_users/`, `revoke_token()`): see REPEAT_SAFE_ENDPOINT_WORDS."""
    if any(
        a.keyword is not None and a.keyword.value in ("idempotent", "is_idempotent") and model.dotted(a.value) == "True"
        for a in call.args
    ):
        return True
    function = model.enclosing_function(call)
    if function is not None and function.name.value.lstrip("_").split("_")[0].lower() in REPEAT_SAFE_ENDPOINT_WORDS:
        return True
    if _graphql_read(model, call):
        return True
    url = url_argument(call)
    url = _local_value(model, url) if isinstance(url, cst.Name) else url
    if url is None:
        return False
    texts = [string_value(n) or "" for n in (url, *model.iter_nodes(url)) if isinstance(n, cst.SimpleString)]
    texts += [n.value for n in (url, *model.iter_nodes(url)) if isinstance(n, cst.FormattedStringText)]
    words = {w.lower() for text in texts for w in _WORD.findall(text.replace("_", " "))}
    return bool(words & REPEAT_SAFE_ENDPOINT_WORDS)


def _graphql_read(model: ModuleModel, call: cst.Call) -> bool:
    """A GraphQL query posted (`json={"query": "query ($user: String) { ... }"}`, or `"{ ... }"`):
    a read, whatever the method; a `mutation` is not."""
    body = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "json"), None)
    body = _local_value(model, body) if isinstance(body, cst.Name) else body
    if not isinstance(body, cst.Dict):
        return False
    query = next(
        (e.value for e in body.elements if isinstance(e, cst.DictElement) and string_value(e.key) == "query"), None
    )
    query = _local_value(model, query) if isinstance(query, cst.Name) else query
    opening = (_leading_text(query) or "").lstrip() if query is not None else ""
    return opening.startswith("{") or re.match(r"query\b", opening) is not None


def _leading_text(expr: cst.BaseExpression) -> str | None:
    """How a string starts, as written: a literal's text, an f-string's first literal part, the
    first piece of an implicitly concatenated string."""
    if isinstance(expr, cst.ConcatenatedString):
        return _leading_text(expr.left)
    if isinstance(expr, cst.FormattedString):
        first = expr.parts[0] if expr.parts else None
        return first.value if isinstance(first, cst.FormattedStringText) else None
    return string_value(expr)


def absolute_body(model: ModuleModel, call: cst.Call) -> bool:
    """A body written out as a dict of fields (here, or bound once in the function) with no key
    that changes a value by an amount or an operation: a PATCH that sets, so a repeat sets the same."""
    body = next((a.value for a in call.args if a.keyword is not None and a.keyword.value in ("json", "data")), None)
    if body is None:
        positional = [a.value for a in call.args if a.keyword is None and not a.star]
        body = positional[1] if len(positional) > 1 else None
    body = _local_value(model, body) if isinstance(body, cst.Name) else body
    if not isinstance(body, cst.Dict) or not body.elements:
        return False
    keys = [string_value(e.key) if isinstance(e, cst.DictElement) else None for e in body.elements]
    return all(key is not None and not RELATIVE_CHANGE_KEY.search(key) for key in keys)


def _local_value(model: ModuleModel, name: cst.Name) -> cst.BaseExpression | None:
    """The value of a name assigned once in the function around it (not a module constant)."""
    return model.sole_value(name) if model.scope_of(name) is not model.module else None
