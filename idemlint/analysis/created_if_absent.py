"""A write sent only when a lookup of the same resource, made first on the same attempt, found
nothing: create-if-absent. A repeat looks again first and finds what the first attempt made, so
the write is safe to retry (IDM301)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import runs_before
from idemlint.analysis.http_methods import http_get
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.analysis.request_parts import WORD, static_text, url_argument
from idemlint.analysis.retry.exits import always_leaves
from idemlint.analysis.retry.loops import classify_loop
from idemlint.knowledge.http import READ_METHODS
from idemlint.knowledge.repeats import names_a_lookup

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


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
        if name == "request" and plain and (string_value(plain[0]) or "").upper() in READ_METHODS:
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
    return [w.lower().rstrip("s") for w in WORD.findall(path)]
