"""What a request call says about itself: its HTTP method when written out, the address it is
sent to (as far as literals and module constants tell), whether it asks for an OAuth token."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.knowledge.http import (
    ANSWERING_ENDPOINT_WORDS,
    COMPUTATION_ENDPOINT_WORDS,
    RELATIVE_CHANGE_KEY,
    REPEAT_SAFE_ENDPOINT_WORDS,
    URL_WORD,
    WRITE_METHODS,
)
from idemlint.knowledge.repeats import names_a_lookup, words_of

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


# an OAuth token endpoint: `/oauth/token`, `/oauth2/token`, a path ending in `access_token` or
# `/token`; not a collection of tokens a request creates (`/projects/{id}/access_tokens`)
_TOKEN_URL = re.compile(r"oauth2?/token(?![\w-])|access_?token/?(?:[?#]|$)|/token/?(?:[?#]|$)", re.IGNORECASE)


def asks_for_a_token(model: ModuleModel, call: cst.Call, target: str | None) -> bool:
    """An OAuth token request: a token endpoint URL, or a `grant_type` in the form it sends
    (its body, or its query: `params=`), written there or in a name the function sets once."""
    if target and _TOKEN_URL.search(target):
        return True
    for arg in call.args:  # the body, by keyword or by position (a caller handing it to a request core)
        value = arg.value
        if isinstance(value, cst.Name):
            value = _local_value(model, value) or value  # `payload = {"grant_type": ...}`, then `data=payload`
        if (arg.keyword is None or arg.keyword.value in ("data", "json", "params")) and isinstance(value, cst.Dict):
            if any(string_value(e.key) == "grant_type" for e in value.elements if isinstance(e, cst.DictElement)):
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
    if isinstance(url, cst.Name):
        url = _local_value(model, url) or url  # `token_url = f"{base}/oauth/token"`, then `post(token_url, ...)`
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


WORD = re.compile(r"[A-Za-z]+")


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
    return _reads_by_its_path(model, call, REPEAT_SAFE_ENDPOINT_WORDS)


def changes_nothing(model: ModuleModel, call: cst.Call, target: str | None) -> bool:
    """A request that leaves the server as it was, whatever its method: an OAuth token request
    for a new token (not a refresh grant, which may rotate the old token away), a GraphQL query,
    or a path whose last part names a search, a lookup, a read or a computation (`/orders/_search`,
    `/oauth/introspect`, `/v1/listInvoices`, `/predict`; words elsewhere in the address, a host's
    `payments-search`, say nothing). Its timeout hides no effect that may have landed."""
    if asks_for_a_token(model, call, target):
        return not _refreshes_a_token(model, call)
    if _graphql_read(model, call):
        return True
    url = _written_url(model, call)
    if url is None:
        return False
    return (
        bool(set(words_of(_last_segment(url))) & ANSWERING_ENDPOINT_WORDS)
        or _names_a_computation(url)
        or _names_a_read(url)
        and not _graphql_mutation(model, call)
    )


def _refreshes_a_token(model: ModuleModel, call: cst.Call) -> bool:
    """`grant_type=refresh_token` in what the request sends, written there or in a name the
    function sets once."""
    for arg in call.args:
        value = _local_value(model, arg.value) or arg.value if isinstance(arg.value, cst.Name) else arg.value
        if any(
            string_value(n) == "refresh_token"
            for n in (value, *model.iter_nodes(value))
            if isinstance(n, cst.SimpleString)
        ):
            return True
    return False


def _reads_by_its_path(model: ModuleModel, call: cst.Call, words_that_say_so: frozenset[str]) -> bool:
    """A GraphQL query, or a written-out address with one of the words, or whose last part names
    a computation or a read (and no GraphQL mutation is posted to it)."""
    if _graphql_read(model, call):
        return True
    url = _written_url(model, call)
    if url is None:
        return False
    texts = [string_value(n) or "" for n in (url, *model.iter_nodes(url)) if isinstance(n, cst.SimpleString)]
    texts += [n.value for n in (url, *model.iter_nodes(url)) if isinstance(n, cst.FormattedStringText)]
    words = {w.lower() for text in texts for w in WORD.findall(text.replace("_", " "))}
    return (
        bool(words & words_that_say_so)
        or _names_a_computation(url)
        or _names_a_read(url)
        and not _graphql_mutation(model, call)
    )


def _written_url(model: ModuleModel, call: cst.Call) -> cst.BaseExpression | None:
    """The request's address as written, through a name set once in the function, a module
    constant or an attribute its class sets once; None where it is not written or is one of
    two (`".../validate" if dry_run else ".../orders"`: which one is sent is not known)."""
    url = url_argument(call)
    url = (_local_value(model, url) or _module_constant(model, url)) if isinstance(url, cst.Name) else url
    url = _instance_value(model, url) or url if isinstance(url, cst.Attribute) else url
    if url is None or any(isinstance(n, cst.IfExp) for n in (url, *model.iter_nodes(url))):
        return None
    return url


def _last_written_text(url: cst.BaseExpression) -> str:
    """The text of an address as written, from its last hole on (`"/v1/embeddings"` of
    `f"{API}/v1/embeddings"`), before any query."""
    if isinstance(url, cst.FormattedString):
        last = url.parts[-1] if url.parts else None
        text = last.value if isinstance(last, cst.FormattedStringText) else ""
    else:
        text = string_value(url) or ""
    return text.split("?", 1)[0]


def _last_segment(url: cst.BaseExpression) -> str:
    """The last part of a path written out (`f"{API}/v1/embeddings"` gives "embeddings"); ""
    where it is not written (`f"{api}/list/{id}"`)."""
    text = _last_written_text(url)
    return text.rstrip("/").rsplit("/", 1)[-1] if "/" in text else ""


def _names_a_computation(url: cst.BaseExpression) -> bool:
    """The path's last part is one verb of a computation that keeps nothing (`/predict`,
    `/v2/translate`), or a custom method's verb says so (`.../models/{m}:embedContent`, Google's
    `resource:verb` style, the verb its first word): see COMPUTATION_ENDPOINT_WORDS."""
    words = words_of(_last_segment(url))
    custom = words_of(_custom_method(url))
    return (
        len(words) == 1
        and words[0] in COMPUTATION_ENDPOINT_WORDS
        or bool(custom)
        and custom[0] in COMPUTATION_ENDPOINT_WORDS
    )


def _custom_method(url: cst.BaseExpression) -> str:
    """`embedContent` of `f"{base}/models/{model}:embedContent"`: what follows the last colon of
    the last part written, where no `/` follows it; "" elsewhere (a host's port, a plain path)."""
    text = _last_written_text(url).rsplit("/", 1)[-1]
    verb = text.rsplit(":", 1)[-1] if ":" in text else ""
    return verb if verb.isidentifier() else ""


def _names_a_read(url: cst.BaseExpression) -> bool:
    """An RPC-style path whose operation reads (`/2/sharing/get_shared_link_file`,
    `f"{API}/v1/listInvoices"`): its last segment, written out, is named for a lookup and for
    nothing that acts or takes (`get_or_create_user`, `get_next_number`, `fetchAndLock`). Not
    `/query` or `/count`: an endpoint named by a noun may take writes."""
    words = words_of(_last_segment(url))
    return names_a_lookup(words) and words[0] not in ("query", "count")


def _instance_value(model: ModuleModel, url: cst.Attribute) -> cst.BaseExpression | None:
    """The value of `self.company_url` where its class assigns it once
    (`self.company_url = urljoin(self.base_url, "companies/search/")` in `__init__`)."""
    owner = model.enclosing_class(url)
    if owner is None or not (isinstance(url.value, cst.Name) and url.value.value == "self"):
        return None
    values = [
        value
        for target, value, _statement in model.attribute_assigns
        if isinstance(target.value, cst.Name)
        and target.value.value == "self"
        and target.attr.value == url.attr.value
        and model.enclosing_class(target) is owner
    ]
    return values[0] if len(values) == 1 else None


def _graphql_mutation(model: ModuleModel, call: cst.Call) -> bool:
    """A GraphQL `mutation` posted: a write, whatever its path says."""
    return _graphql_opening(model, call).startswith("mutation")


def _module_constant(model: ModuleModel, name: cst.Name) -> cst.BaseExpression | None:
    """The value of a module constant assigned once (`DOWNLOAD_URL = "https://..."`), read in
    a function where no function around it binds the name and no function declares it
    `global` (which may assign it anew)."""
    scope: cst.CSTNode | None = model.scope_of(name)
    while scope is not None and scope is not model.module:
        if model.bindings_of(scope, name.value):
            return None  # a name of the function's own, or of one around it
        scope = model.scope_of(scope)
    if scope is None or any(
        isinstance(node, cst.Global) and any(n.name.value == name.value for n in node.names)
        for node in model.iter_nodes(model.module, stop_at_functions=False)
    ):
        return None
    bound = model.bindings_of(model.module, name.value)
    return bound[0].value if len(bound) == 1 and bound[0].kind == "assign" else None


def _graphql_read(model: ModuleModel, call: cst.Call) -> bool:
    """A GraphQL query posted (`json={"query": "query ($user: String) { ... }"}`, or `"{ ... }"`):
    a read, whatever the method; a `mutation` is not."""
    opening = _graphql_opening(model, call)
    return opening.startswith("{") or re.match(r"query\b", opening) is not None


def _graphql_opening(model: ModuleModel, call: cst.Call) -> str:
    """How the GraphQL document a call posts starts (`json={"query": "mutation ..."}`), or ''."""
    body = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "json"), None)
    body = _local_value(model, body) if isinstance(body, cst.Name) else body
    if not isinstance(body, cst.Dict):
        return ""
    query = next(
        (e.value for e in body.elements if isinstance(e, cst.DictElement) and string_value(e.key) == "query"), None
    )
    query = _local_value(model, query) if isinstance(query, cst.Name) else query
    return (_leading_text(query) or "").lstrip() if query is not None else ""


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
    """A URL or a path as far as it is known (`"https://..."`, `f"{API}/rules"`), a name that
    says it holds one (`url`, `endpoint`, `self.base_uri`), one joined from such
    (`self.base_url + path`), or what a function named for one returns (`urljoin(base, url)`,
    `self._build_url(path)`)."""
    text = static_text(model, url)
    if text is not None:
        return text.startswith(("http://", "https://", "/", "{")) or "/" in text
    if isinstance(url, cst.BinaryOperation) and isinstance(url.operator, cst.Add):
        return _names_a_url(model, url.left) or _names_a_url(model, url.right)
    if isinstance(url, cst.Call):
        return _names_a_url(model, url.func)
    dotted = (model.dotted(url) or "").lower()
    return any(word in dotted for word in ("url", "uri", "path", "endpoint", "href", "link"))


def _names_a_url(model: ModuleModel, node: cst.BaseExpression) -> bool:
    text = static_text(model, node)
    if text is not None:
        return text.startswith(("http://", "https://", "/"))
    return bool(URL_WORD.search((model.dotted(node) or "").rsplit(".", 1)[-1]))


def _local_value(model: ModuleModel, name: cst.Name) -> cst.BaseExpression | None:
    """The value of a name assigned once in the function around it (not a module constant)."""
    return model.sole_value(name) if model.scope_of(name) is not model.module else None
