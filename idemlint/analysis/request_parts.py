"""What a request call says about itself: its HTTP method when written out, the address it is
sent to (as far as literals and module constants tell), whether it asks for an OAuth token."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import runs_before
from idemlint.analysis.http_methods import http_get
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.analysis.retry.exits import always_leaves
from idemlint.analysis.retry.loops import classify_loop
from idemlint.knowledge.http import (
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
    url = (_local_value(model, url) or _module_constant(model, url)) if isinstance(url, cst.Name) else url
    url = _instance_value(model, url) or url if isinstance(url, cst.Attribute) else url
    if url is None or any(isinstance(n, cst.IfExp) for n in (url, *model.iter_nodes(url))):
        return False  # `".../validate" if dry_run else ".../orders"`: which one is sent is not known
    texts = [string_value(n) or "" for n in (url, *model.iter_nodes(url)) if isinstance(n, cst.SimpleString)]
    texts += [n.value for n in (url, *model.iter_nodes(url)) if isinstance(n, cst.FormattedStringText)]
    words = {w.lower() for text in texts for w in _WORD.findall(text.replace("_", " "))}
    return (
        bool(words & REPEAT_SAFE_ENDPOINT_WORDS)
        or _names_a_computation(url)
        or _names_a_read(url)
        and not _graphql_mutation(model, call)
    )


def _last_segment(url: cst.BaseExpression) -> str:
    """The last part of a path written out (`f"{API}/v1/embeddings"` gives "embeddings"), before
    any query; "" where it is not written (`f"{api}/list/{id}"`)."""
    if isinstance(url, cst.FormattedString):
        last = url.parts[-1] if url.parts else None
        text = last.value if isinstance(last, cst.FormattedStringText) else ""
    else:
        text = string_value(url) or ""
    return text.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1] if "/" in text else ""


def _names_a_computation(url: cst.BaseExpression) -> bool:
    """The path's last part is one verb of a computation that keeps nothing (`/predict`,
    `/v2/translate`): see COMPUTATION_ENDPOINT_WORDS."""
    words = words_of(_last_segment(url))
    return len(words) == 1 and words[0] in COMPUTATION_ENDPOINT_WORDS


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


def created_if_absent(model: ModuleModel, call: cst.Call) -> bool:
    """A write sent only when a lookup of the same resource, made first on the same attempt,
    found nothing (`rules = requests.get(f"{api}/rules").json()`, then `if not rules:
    requests.post(f"{api}/rules", ...)`, or `if found: return` before it): a repeat looks
    again first and finds what the first attempt made. The test is on whether anything was
    found (`not rules`, `len(rules) == 0`, `account is None`), not on a field of it."""
    function = model.enclosing_function(call)
    if function is None or any(
        isinstance(a, cst.Lambda) and model.is_inside(a, function) for a in model.ancestors(call)
    ):
        return False  # `retry_call(lambda: post(...))`: the lambda is retried, not the lookup before it
    retries = [
        a
        for a in model.ancestors(call)
        if isinstance(a, (cst.For, cst.While)) and model.is_inside(a, function) and classify_loop(model, a) is not None
    ]
    lookups = {
        name: read
        for name, read in _lookup_results(model, function).items()
        if all(model.is_inside(read, loop) for loop in retries)
        and runs_before(model, read, call)
        and _same_resource(model, read, call)
    }  # looked up on every way to the write, again on each attempt of a retry loop around it
    if not lookups:
        return False
    for ancestor in model.ancestors(call):
        if ancestor is function:
            return False
        if isinstance(ancestor, cst.If):
            answer = _found_or_not(model, ancestor.test, lookups)
            if answer is not None and (answer == "absent") == model.is_inside(call, ancestor.body):
                return True  # `if not existing: post(...)`, `if found: ... else: post(...)`
        parent = model.parents.get(ancestor)
        if isinstance(parent, cst.IndentedBlock):  # `if existing: return existing` earlier in a block holding the call
            for statement in parent.body:
                if statement is ancestor:
                    break
                if (
                    isinstance(statement, cst.If)
                    and _found_or_not(model, statement.test, lookups) == "present"
                    and always_leaves(list(statement.body.body), or_continues=True)
                ):
                    return True
    return False


def _found_or_not(model: ModuleModel, test: cst.BaseExpression, lookups: dict[str, cst.Call]) -> str | None:
    """ "absent" for a test true when a lookup found nothing (`not rules`, `len(rules) == 0`,
    `account is None`), "present" for one true when it found something (`rules`, `len(rules) >
    0`, `account is not None`), None for any other test (a field of it, a status code)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _found_or_not(model, test.expression, lookups)
        return None if inner is None else "absent" if inner == "present" else "present"
    if _names_a_lookup(test, lookups):
        return "present"
    if not (isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and _names_a_lookup(test.left, lookups)):
        return None
    operator, value = test.comparisons[0].operator, test.comparisons[0].comparator
    if model.dotted(value) == "None":
        return "absent" if isinstance(operator, (cst.Is, cst.Equal)) else "present"
    counted = isinstance(test.left, cst.Call)  # `len(rules) == 0`; a number found (`balance == 0`) says nothing
    number = value.value if isinstance(value, cst.Integer) else ""
    return _EMPTINESS.get((type(operator).__name__, number)) if counted else None


# how a count of what a lookup found says "nothing" or "something": `len(x) == 0`, `len(x) >= 1`
_EMPTINESS = {
    ("Equal", "0"): "absent",
    ("LessThanEqual", "0"): "absent",
    ("LessThan", "1"): "absent",
    ("NotEqual", "0"): "present",
    ("GreaterThan", "0"): "present",
    ("GreaterThanEqual", "1"): "present",
}


def _names_a_lookup(expr: cst.BaseExpression, lookups: dict[str, cst.Call]) -> bool:
    """`rules` or `len(rules)` for a name bound to a lookup's result."""
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Name)
        and expr.func.value == "len"
        and len(expr.args) == 1
    ):
        expr = expr.args[0].value
    return isinstance(expr, cst.Name) and expr.value in lookups


def _lookup_results(model: ModuleModel, function: cst.FunctionDef) -> dict[str, cst.Call]:
    """The names bound once in `function` to what a lookup returned (`rules = requests.get(url)`,
    `rules = requests.get(url).json()`, `found = search_accounts(email)`), each with its lookup
    call; not a field of it (`rules["items"]`), nor a name bound again elsewhere."""
    found: dict[str, cst.Call] = {}
    once = {name: b[0].value for name, b in (model.bindings.get(function) or {}).items() if len(b) == 1}
    for _ in range(3):  # `existing = requests.get(url)`, then `rules = existing.json()`
        for name, value in once.items():
            value = value.expression if isinstance(value, cst.Await) else value
            if (
                isinstance(value, cst.Call)
                and isinstance(value.func, cst.Attribute)
                and value.func.attr.value == "json"
            ):
                value = value.func.value  # `requests.get(url).json()`, `response.json()`
                value = value.expression if isinstance(value, cst.Await) else value
            if isinstance(value, cst.Name) and value.value in found:
                found[name] = found[value.value]
            elif isinstance(value, cst.Call) and _reads(model, value):
                found[name] = value
    return found


def _reads(model: ModuleModel, call: cst.Call) -> bool:
    """An HTTP GET (`http_get`), or a call named for a lookup (`search_accounts(...)`,
    `api.list_rules()`) and for nothing that acts."""
    name = (model.call_name(call) or model.dotted(call.func) or "").rsplit(".", 1)[-1]
    if name in ("get", "request") and isinstance(call.func, cst.Attribute):
        return http_get(model, call)
    return names_a_lookup(name.lower().lstrip("_").split("_"))


def _same_resource(model: ModuleModel, read: cst.Call, write: cst.Call) -> bool:
    """The lookup asks for what the write makes: the last word of the GET's path is the last of
    the write's (`/rules` and `/rules`, `/accounts?email=x` and `/accounts`), or the lookup's
    name ends with it (`search_account_by_email` and `/accounts`)."""
    url = url_argument(write)
    written = _path_words(static_text(model, url) or "") if url is not None else []
    if not written:
        return False
    name = (model.call_name(read) or model.dotted(read.func) or "").rsplit(".", 1)[-1]
    if name in ("get", "request"):
        plain = [a.value for a in read.args if a.keyword is None]
        if name == "request" and plain and (string_value(plain[0]) or "").upper() in ("GET", "HEAD"):
            plain = plain[1:]  # `client.request("GET", url)`
        address = next((a.value for a in read.args if a.keyword is not None and a.keyword.value == "url"), None)
        address = address if address is not None else plain[0] if plain else None
        asked = _path_words(static_text(model, address) or "") if address is not None else []
        return bool(asked) and asked[-1] == written[-1]
    words = name.lower().lstrip("_").split("_")[1:]
    words = words[: words.index("by")] if "by" in words else words
    return bool(words) and words[-1].rstrip("s") == written[-1]


def _path_words(text: str) -> list[str]:
    """The words of an address's literal path, singular, without its host (`f"{api}/rules?x=1"`
    and `"https://api.example/rules"` give ["rule"])."""
    text = text.split("?", 1)[0]
    if "://" in text:
        text = "/" + text.split("://", 1)[1].partition("/")[2]
    path = re.sub(r"\{[^}]*\}", "/", text)
    return [w.lower().rstrip("s") for w in _WORD.findall(path)]
