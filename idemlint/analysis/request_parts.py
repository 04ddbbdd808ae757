"""What a request call says about itself: its HTTP method when written out, the address it is
sent to (as far as literals and module constants tell), whether it asks for an OAuth token."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.analysis.retry.exits import always_leaves
from idemlint.knowledge.http import RELATIVE_CHANGE_KEY, REPEAT_SAFE_ENDPOINT_WORDS, WRITE_METHODS
from idemlint.knowledge.repeats import ACTING_WORDS, LOOKUP_WORDS

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


def names_an_address(model: ModuleModel, url: cst.BaseExpression) -> bool:
    """A URL or a path as far as it is known (`"https://..."`, `f"{API}/rules"`), or a name
    that says it holds one (`url`, `endpoint`, `self.base_uri`)."""
    text = static_text(model, url)
    if text is not None:
        return text.startswith(("http://", "https://", "/", "{")) or "/" in text
    dotted = (model.dotted(url) or "").lower()
    return any(word in dotted for word in ("url", "uri", "path", "endpoint", "href", "link"))


def _local_value(model: ModuleModel, name: cst.Name) -> cst.BaseExpression | None:
    """The value of a name assigned once in the function around it (not a module constant)."""
    return model.sole_value(name) if model.scope_of(name) is not model.module else None


def created_if_absent(model: ModuleModel, call: cst.Call) -> bool:
    """A write sent only when a read made first in the same function found nothing (`existing =
    requests.get(url).json()`, then `if not existing: requests.post(url, ...)`, or `if found:
    return` before it): a repeat reads again first and finds what the first attempt made."""
    function = model.enclosing_function(call)
    if function is None:
        return False
    found = _read_results(model, function)
    if not found:
        return False
    for ancestor in model.ancestors(call):
        if ancestor is function:
            return False
        if isinstance(ancestor, cst.If) and model.names_read(ancestor.test) & found:
            in_body = model.is_inside(call, ancestor.body)
            if _says_absent(model, ancestor.test) == in_body:
                return True  # `if not existing: post(...)`, `if found: ... else: post(...)`
        parent = model.parents.get(ancestor)
        if isinstance(parent, cst.IndentedBlock):  # `if existing: return existing` earlier in a block holding the call
            for statement in parent.body:
                if statement is ancestor:
                    break
                if (
                    isinstance(statement, cst.If)
                    and model.names_read(statement.test) & found
                    and not _says_absent(model, statement.test)
                    and always_leaves(list(statement.body.body), or_continues=True)
                ):
                    return True
    return False


def _says_absent(model: ModuleModel, test: cst.BaseExpression) -> bool:
    """A test true when the lookup found nothing: `not existing`, `len(rules) == 0`, `account is
    None`, `email not in emails`; not `found`, `len(rules) > 0`, `form is not None`."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        return True
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        operator, value = target.operator, target.comparator
        if isinstance(operator, (cst.Is, cst.Equal)) and model.dotted(value) == "None":
            return True
        if isinstance(operator, cst.NotIn):
            return True
        empty = (
            isinstance(value, cst.Integer) and value.value == "0" or isinstance(value, cst.List) and not value.elements
        )
        return (
            isinstance(operator, cst.Equal)
            and empty
            or isinstance(operator, cst.LessThan)
            and model.dotted(value) == "1"
        )
    return False


def _read_results(model: ModuleModel, function: cst.FunctionDef) -> set[str]:
    """The names bound in `function` to what a read request (or a lookup: `search_accounts()`,
    `client.find_user()`) returned, and to what is derived from those."""
    bindings = [b for bs in (model.bindings.get(function) or {}).values() for b in bs if b.value is not None]
    found: set[str] = set()
    changed = True
    while changed:
        changed = False
        for binding in bindings:
            if binding.name in found or binding.value is None:
                continue
            value = binding.value
            if model.names_read(value) & found or any(
                isinstance(n, cst.Call) and _reads(model, n) for n in (value, *model.iter_nodes(value))
            ):
                found.add(binding.name)
                changed = True
    return found


def _reads(model: ModuleModel, call: cst.Call) -> bool:
    """A GET request (`requests.get(url)`, `session.request("GET", url)`), or a call named for a
    lookup (`search_account_by_email(...)`, `api.list_rules()`) and for nothing that writes."""
    name = (model.call_name(call) or model.dotted(call.func) or "").rsplit(".", 1)[-1]
    if name == "get":
        url = url_argument(call)
        return url is not None and names_an_address(model, url)
    if name == "request":
        return _any_literal_method(call) == "GET"
    words = name.lower().lstrip("_").split("_")
    return words[0] in LOOKUP_WORDS and not set(words) & ACTING_WORDS
