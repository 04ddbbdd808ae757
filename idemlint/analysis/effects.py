"""Calls that change something in another system: HTTP writes and payment/messaging SDKs.

Shared by IDM301 (retried without a key), IDM302 (timeout handled as failure) and the
audit; what a handler of a timeout does is read in `timeouts`. Recognition is by library and
shape; a receiver whose type we cannot see counts as an HTTP client only when its name says
so (`session`, `client`, `http`), never for any object that happens to have a `.post` method.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.created_if_absent import created_if_absent
from idemlint.analysis.duplicate_answers import duplicate_answer_absorbed
from idemlint.analysis.http_methods import literal_method
from idemlint.analysis.keys import KeySinks
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.analysis.request_parts import (
    absolute_body,
    changes_nothing,
    names_an_address,
    repeat_safe_endpoint,
    request_target,
)
from idemlint.analysis.sent_requests import gives_the_address, handed_request

# The timeout half moved to `timeouts`; its names stay importable from here (the audit uses them).
from idemlint.analysis.timeouts import records_failure as records_failure
from idemlint.analysis.timeouts import timeout_caught as timeout_caught
from idemlint.knowledge.http import (
    CLIENT_FACTORIES,
    CLIENT_NAME,
    HTTP_MODULES,
    METHOD_ATTRIBUTES,
    NOT_IDEMPOTENT_METHODS,
    SOCKET,
    SOCKET_FACTORIES,
    SOCKET_SENDS,
    WRITE_METHOD_FUNCTIONS,
    WRITE_METHODS,
)
from idemlint.knowledge.keys import KEY_VARIABLE
from idemlint.knowledge.sdks import (
    AWS_SDK,
    BIGQUERY,
    BIGQUERY_INSERTS,
    BIGQUERY_MODULE,
    FIFO_MESSAGING_CALLS,
    SDK_CLIENTS,
    SDK_OBJECT_PACKAGES,
    SDK_OBJECT_VERBS,
    SDK_PACKAGES,
    SDK_VERBS,
)

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.config import Config
else:
    cst = LazyModule("libcst", globals(), "cst")


@dataclass(frozen=True, eq=False)
class SideEffect:
    call: cst.Call
    library: str  # requests, httpx, aiohttp, urllib3, stripe, boto3, ..., custom
    operation: str  # "requests.post", "stripe.Refund.create", "session.post"
    method: str | None  # the HTTP method, for HTTP calls
    keyed: bool | None  # True: sends a key; False: certainly none; None: cannot tell
    retry_safe: bool  # idempotent by nature (PUT, DELETE, declared idempotent)
    target: str | None  # URL literal or expression text, when there is one
    changes_nothing: bool = False  # leaves the server as it was: a token request, a search


@dataclass(frozen=True, eq=False)
class VerbRequest:
    """An HTTP request without a key whose method is a parameter of the function making it."""

    call: cst.Call
    operation: str  # "self.session.request"
    parameter: str  # the parameter that names the method
    attribute: str = ""  # or the attribute of it that does (`options.method`)
    # the function whose parameter it is, when not the one making the request (a closure's)
    function: cst.FunctionDef | None = None

    @property
    def named(self) -> str:
        """How a message names what carries the method: `method`, `options.method`."""
        return f"{self.parameter}.{self.attribute}" if self.attribute else self.parameter


class EffectAnalysis:
    def __init__(self, model: ModuleModel, sinks: KeySinks, config: Config) -> None:
        self.model = model
        self.sinks = sinks
        self.config = config
        self._keyed_calls = {sink.call for sink in sinks.sinks if sink.call is not None}
        self.effects: list[SideEffect] = []
        self.by_call: dict[cst.Call, SideEffect] = {}
        # requests whose HTTP method is the enclosing function's parameter: an effect only
        # when a caller passes POST or PATCH (`summaries` binds it)
        self.verb_requests: list[VerbRequest] = []
        self._no_key: bool | None = None
        for call in model.calls:
            effect = self._classify(call)
            if effect is not None:
                self.effects.append(effect)
                self.by_call[call] = effect

    def _classify(self, call: cst.Call) -> SideEffect | None:
        model = self.model
        if isinstance(call.func, cst.Call) and model.call_name(call.func) == "getattr":
            return self._request_by_name(call, call.func)
        dotted = model.dotted(call.func)
        name = model.call_name(call)
        if dotted is None or name is None:
            return None
        if model.vocabulary.declared_idempotent(name, dotted):
            return None
        if model.vocabulary.declared_side_effect(name, dotted):
            return self._effect(call, "custom", dotted, None, False)
        head, _, last = name.rpartition(".")
        if head in HTTP_MODULES and last in WRITE_METHOD_FUNCTIONS | {"request"}:
            method = last.upper() if last != "request" else literal_method(call)
            if method is None:
                self._note_verb_request(call, name)
                return None
            return self._effect(call, head.split(".")[0], name, method, method not in NOT_IDEMPOTENT_METHODS)
        if isinstance(call.func, cst.Attribute) and last in WRITE_METHOD_FUNCTIONS | {"request", "urlopen"}:
            library = self._client_library(call.func.value)
            if library == "http" and not self._url_argument(call):
                library = None  # a client known only by its name must be given a URL (not redis.delete(keys))
            if library is not None:
                method = last.upper() if last in WRITE_METHOD_FUNCTIONS else literal_method(call)
                if method is None:
                    self._note_verb_request(call, dotted)
                    return None
                return self._effect(call, library, dotted, method, method not in NOT_IDEMPOTENT_METHODS)
        if isinstance(call.func, cst.Attribute) and last.lower().endswith("request"):
            # `self._backend.http_request(method=verb, ...)`: a request function of a client we
            # cannot see, given the method by name; a request only when a caller names POST
            self._note_verb_request(call, dotted, keyword_only=True)
        if last == "send" and isinstance(call.func, cst.Attribute) and (handed := handed_request(model, call)):
            if not handed[2] or self._client_library(call.func.value) is not None:  # by name: a client's
                self._note_verb_request(call, dotted, handed=handed[:2])  # `client.send(request)`: its own method
        if (
            last in SOCKET_SENDS
            and isinstance(call.func, cst.Attribute)
            and self._client_library(call.func.value, SOCKET_FACTORIES, by_name=False) == SOCKET
        ):
            return self._effect(call, SOCKET, dotted, None, False)  # `sock.sendall(request)`
        if last in SDK_VERBS or last in SDK_OBJECT_VERBS:
            library = SDK_PACKAGES.get(name.split(".")[0]) if last in SDK_VERBS else None
            library = library or (self._sdk_client(call.func) if last in SDK_VERBS else None)
            if library is not None:
                return self._effect(call, library, name, None, False)
            built = self._sdk_object(call)
            if built is not None and (last in SDK_VERBS or last in SDK_OBJECT_VERBS.get(last, ())):
                library, fresh_per_pass = built
                effect = self._effect(call, library, name, None, False)
                # the SDK keys each request by its resource object: an object built once is
                # keyed, one built again on each pass of the loop is not
                return SideEffect(
                    effect.call,
                    effect.library,
                    effect.operation,
                    None,
                    not fresh_per_pass,
                    False,
                    effect.target,
                )
        if (
            last in BIGQUERY_INSERTS
            and isinstance(call.func, cst.Attribute)
            and any(target.startswith(BIGQUERY_MODULE) for target in self.model.imports.values())
            and any(a.keyword is not None and a.keyword.value in ("table", "json_rows", "rows") for a in call.args)
        ):
            # BigQuery streaming insert: without row_ids the client makes fresh insertIds per call
            keyed = any(a.keyword is not None and a.keyword.value == "row_ids" for a in call.args)
            return SideEffect(call, BIGQUERY, dotted, None, keyed, False, None)
        if last in FIFO_MESSAGING_CALLS and _is_fifo(call):
            return self._effect(call, AWS_SDK, dotted, None, False)
        return None

    def _effect(self, call: cst.Call, library: str, operation: str, method: str | None, retry_safe: bool) -> SideEffect:
        # An SDK call's "target" is the API object it acts on (stripe.Refund), not an argument.
        target = request_target(self.model, call) if method or library == AWS_SDK else operation.rsplit(".", 1)[0]
        quiet = bool(method) and changes_nothing(self.model, call, target)  # a token request, a search
        if method and (
            quiet
            or repeat_safe_endpoint(self.model, call)
            or method == "PATCH"
            and absolute_body(self.model, call)
            or created_if_absent(self.model, call)
            or method == "POST"
            and duplicate_answer_absorbed(self.model, call)  # a 409 on a PATCH is a version clash
        ):
            retry_safe = True
        return SideEffect(call, library, operation, method, self._keyed(call), retry_safe, target, quiet)

    def _url_argument(self, call: cst.Call) -> bool:
        """The request's first argument (or url=) looks like a URL or path."""
        args = [a.value for a in call.args if a.keyword is None]
        method_first = isinstance(call.func, cst.Attribute) and call.func.attr.value == "request" and len(args) > 1
        if method_first or args and (string_value(args[0]) or "").upper() in WRITE_METHODS:
            args = args[1:]  # `request(method, url)`: the URL comes second
        url = next(
            (a.value for a in call.args if a.keyword is not None and a.keyword.value == "url"),
            args[0] if args else None,
        )
        return url is not None and names_an_address(self.model, url)

    def _sdk_object(self, call: cst.Call) -> tuple[str, bool] | None:
        """`payment = paypalrestsdk.Payment(data)` then `payment.create()`: (library,
        whether the object is built again on each pass of a loop around the call)."""
        func = call.func
        if not isinstance(func, cst.Attribute) or not isinstance(func.value, cst.Name):
            return None
        model = self.model
        for binding in model.bindings_of(model.scope_of(func.value), func.value.value):
            value = binding.value
            if not isinstance(value, cst.Call):
                continue
            library = SDK_OBJECT_PACKAGES.get((model.call_name(value) or "").split(".")[0])
            if library is None:
                continue
            fresh = any(
                isinstance(a, (cst.For, cst.While)) and model.is_inside(binding.statement, a.body)
                for a in model.ancestors(call)
            )
            return library, fresh
        return None

    def _sdk_client(self, func: cst.BaseExpression) -> str | None:
        """`client.payment_intents.create` where `client = stripe.StripeClient(...)`."""
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return None
        for binding in self.model.bindings_of(self.model.scope_of(root), root.value) + self.model.bindings_of(
            self.model.module, root.value
        ):
            if isinstance(binding.value, cst.Call):
                library = SDK_CLIENTS.get(self.model.call_name(binding.value) or "")
                if library:
                    return library
        return None

    def _client_library(
        self, receiver: cst.BaseExpression, factories: Mapping[str, str] = CLIENT_FACTORIES, by_name: bool = True
    ) -> str | None:
        """The library of the client a receiver is: built by one of `factories` (here, or where
        the name is bound, or as its annotation says), or, `by_name`, an HTTP client named like one."""
        model = self.model
        if isinstance(receiver, cst.Call):
            return factories.get(model.call_name(receiver) or "")
        dotted = model.dotted(receiver)
        if dotted is None:
            return None
        if isinstance(receiver, cst.Name):
            scope = model.scope_of(receiver)
            for binding in model.resolve(scope, receiver.value):
                if binding.annotation is not None:  # def notify(session: aiohttp.ClientSession)
                    library = factories.get(model.qualname(binding.annotation) or "")
                    if library:
                        return library
                value = binding.value
                if isinstance(value, cst.Await):
                    value = value.expression
                if isinstance(value, cst.Call):
                    library = factories.get(model.call_name(value) or "")
                    if library:
                        return library
        if not by_name:
            return None
        if (model.qualname(receiver) or "").startswith(("unittest", "mock", "pytest")):
            return None
        if CLIENT_NAME.search(dotted.rsplit(".", 1)[-1]):
            return "http"
        return None

    def _request_by_name(self, call: cst.Call, lookup: cst.Call) -> SideEffect | None:
        """`getattr(self.session, method)(url, ...)`: the client's method chosen by name, a
        literal (`"post"`) or the function's parameter (bound by each caller)."""
        positional = [a.value for a in lookup.args if a.keyword is None and not a.star]
        if len(positional) < 2 or self._client_library(positional[0]) is None:
            return None
        operation = self.model.module.code_for_node(lookup)
        verb = string_value(positional[1])
        if verb is not None:
            method = verb.upper()
            if method.lower() not in WRITE_METHOD_FUNCTIONS:
                return None
            return self._effect(call, "http", operation, method, method not in NOT_IDEMPOTENT_METHODS)
        self._note_verb_request(call, operation, method=positional[1])
        return None

    def _note_verb_request(
        self,
        call: cst.Call,
        operation: str,
        method: cst.BaseExpression | None = None,
        keyword_only: bool = False,
        handed: tuple[str, cst.FunctionDef] | None = None,
    ) -> None:
        """`session.request(method, url)` in `def _request(self, method, path)`: the method is
        the function's parameter, bound by each caller; or the request object's, `handed` in."""
        if handed is not None:
            if self._unkeyed(call):
                owner = None if handed[1] is self.model.enclosing_function(call) else handed[1]
                self.verb_requests.append(VerbRequest(call, operation, handed[0], "method", owner))
            return
        first = (
            call.args[0].value
            if call.args and call.args[0].keyword is None and not call.args[0].star and not keyword_only
            else None
        )  # not `requests.request(**kwargs)`: the method, if any, is somewhere in what it is handed
        if method is None:
            method = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == "method"), first)
        attribute = ""
        if (
            isinstance(method, cst.Attribute)
            and isinstance(method.value, cst.Name)
            and method.value.value not in ("self", "cls")
            and method.attr.value in METHOD_ATTRIBUTES
            and (not keyword_only or gives_the_address(self.model, call, method.value.value))
        ):
            # `session.request(options.method, ...)`: the method rides in an object handed in
            attribute, method = method.attr.value, method.value
        if not isinstance(method, cst.Name):
            return
        bindings = self.model.bindings_of(self.model.scope_of(call), method.value)
        if not bindings or not all(b.kind == "param" for b in bindings):
            return
        if self._unkeyed(call):
            self.verb_requests.append(VerbRequest(call, operation, method.value, attribute))

    def _unkeyed(self, call: cst.Call) -> bool:
        """No key in the request: options it cannot see (`**opts`, a helper's headers) hold none
        when nothing in the module names one (the callers that name POST send what it builds)."""
        keyed = self._keyed(call)
        return keyed is False or keyed is None and self._names_no_key()

    def _names_no_key(self) -> bool:
        """Nothing in the module is an idempotency key: no key sink, no string naming one, no
        name that says "idempotency" (`headers[IDEMPOTENCY_HEADER]`, an imported constant).
        Asked once per module, only for a request core whose options are unseen."""
        if self._no_key is None:
            self._no_key = (
                not self.sinks.sinks
                and not any(
                    self.sinks.is_key_name(text, sent=True)
                    for node in self.model.strings
                    if isinstance(node, cst.SimpleString) and (text := string_value(node))
                )
                and not any(type(node) is cst.Name and KEY_VARIABLE.search(node.value) for node in self.model.children)
            )
        return self._no_key

    def _keyed(self, call: cst.Call) -> bool | None:
        if call in self._keyed_calls:
            return True
        unknown = False
        for arg in call.args:
            if arg.keyword is not None and self.sinks.is_key_name(arg.keyword.value, sent=True):
                return True
            if arg.star == "**":
                unknown = True
            if arg.keyword is not None and arg.keyword.value in (
                "headers",
                "options",
                "request_options",
                "extra_headers",
            ):
                verdict = self._container_has_key(arg.value)
                if verdict is None:
                    unknown = True
                elif verdict:
                    return True
            elif arg.keyword is not None and arg.keyword.value in ("json", "data", "body", "params", "content"):
                # A key in the body (Square-style APIs); a body built elsewhere is assumed keyless.
                if self._container_has_key(arg.value):
                    return True
        return None if unknown else False

    def _container_has_key(self, expr: cst.BaseExpression) -> bool | None:
        """Whether a headers dict (literal, or a variable filled in this function) holds a key."""
        model = self.model
        if isinstance(expr, cst.Dict):
            return any(
                isinstance(e, cst.DictElement)
                and (key := string_value(e.key)) is not None
                and self.sinks.is_key_name(key, sent=True)
                for e in expr.elements
            ) or (None if any(isinstance(e, cst.StarredDictElement) for e in expr.elements) else False)
        if isinstance(expr, cst.Call) and model.call_name(expr) == "dict":
            if any(a.keyword is not None and self.sinks.is_key_name(a.keyword.value, sent=True) for a in expr.args):
                return True
            return None if any(a.star for a in expr.args) else False
        if isinstance(expr, cst.Name):
            bindings = model.bindings_of(model.scope_of(expr), expr.value)
            if not bindings or any(b.kind == "param" for b in bindings):
                return None
            for subscript, _value, _statement in model.subscript_assigns:
                if model.dotted(subscript.value) == expr.value and model.scope_of(subscript) is model.scope_of(expr):
                    index = subscript.slice[0].slice
                    key = string_value(index.value) if isinstance(index, cst.Index) else None
                    if key is not None and self.sinks.is_key_name(key, sent=True):
                        return True
            verdicts = [self._container_has_key(b.value) if b.value is not None else None for b in bindings]
            if any(v is True for v in verdicts):
                return True
            if any(v is None for v in verdicts):
                return None
            for call in model.calls:
                if (
                    isinstance(call.func, cst.Attribute)
                    and call.func.attr.value == "update"
                    and model.dotted(call.func.value) == expr.value
                ):
                    return None if not call.args else self._container_has_key(call.args[0].value)
            return False
        return None


def _is_fifo(call: cst.Call) -> bool:
    for arg in call.args:
        if arg.keyword is None:
            continue
        if arg.keyword.value == "MessageGroupId":
            return True
        if arg.keyword.value in ("QueueUrl", "TopicArn"):
            value = string_value(arg.value)
            if value and value.endswith(".fifo"):
                return True
    return False
