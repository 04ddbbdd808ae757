"""Family 3xx: side-effecting calls to other systems, retried or timed out unsafely."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint.analysis.effects import SideEffect
from idemlint.analysis.model import ModuleModel, iter_nodes, local_callee, string_value
from idemlint.rule import Report, Rule

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.context import FileContext
else:
    from idemlint._lazy import LazyModule

    cst = LazyModule("libcst", globals(), "cst")

EFFECT_WORDS = (
    ".post(",
    ".patch(",
    'post"',
    "post'",
    'patch"',
    "patch'",
    "stripe",
    "braintree",
    "adyen",
    "square",
    "send_message",
    "publish",
    ".create(",
    "capture",
    "refund",
    "transfer",
    "charge",
    "payout",
)
RETRY_WORDS = ("retry", "retries", "backoff", "stamina", "autoretry", "attempt", "tries", "while ", "actor", "range(")


def unkeyed_effect(effect: SideEffect | None) -> bool:
    return effect is not None and not effect.retry_safe and effect.keyed is False


class UnkeyedRetriedSideEffect(Rule):
    code = "IDM301"
    confidence = "medium"
    name = "unkeyed-retried-side-effect"
    summary = "A non-idempotent external call is retried without an idempotency key."
    what_it_does = (
        "Flags a side-effecting call to another system made inside a retry context without an idempotency key "
        "in its arguments or headers: HTTP POST or PATCH through requests, httpx (sync and async), aiohttp or "
        "urllib3; payment SDK calls that create, charge, capture, refund, transfer or pay (stripe, braintree, "
        "adyen, square, ...); boto3 `send_message`/`publish` to FIFO queues and topics without "
        "`MessageDeduplicationId`. A same-module helper that makes such a call and is called on every attempt is "
        "reported at that call. Calls whose headers are built elsewhere (so a key may be there) are not reported."
    )
    why = (
        "A timeout does not mean the request failed: the server may have charged the card and the response got "
        "lost. Retrying without a key asks the server to do it again, and it will."
    )
    fix_hint = "Send an idempotency key generated once per operation (outside the retry) with every attempt, or do not retry: reconcile with a status query instead."
    known_problems = (
        "An HTTP client is recognised from its constructor (`requests.Session()`, `httpx.Client()`, "
        "`aiohttp.ClientSession()`) or from a receiver named like one (`session`, `client`, `http`). Keys added by "
        "a session-wide header, an auth hook or a transport adapter are not seen; declare such wrappers with "
        "`idempotent-calls`. User wrappers can be declared with `side-effect-calls`."
    )
    bad = """\
import requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

@retry(retry=retry_if_exception_type(requests.Timeout), stop=stop_after_attempt(3),
       wait=wait_random_exponential(max=10))
def pay_invoice(invoice):
    return requests.post("https://pay.example/payments", json={"invoice": invoice.id}, timeout=10)
"""
    good = """\
import requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

@retry(retry=retry_if_exception_type(requests.Timeout), stop=stop_after_attempt(3),
       wait=wait_random_exponential(max=10))
def pay_invoice(invoice, key):
    return requests.post("https://pay.example/payments", json={"invoice": invoice.id},
                         headers={"Idempotency-Key": key}, timeout=10)
"""
    how_to_fix = (
        ("requests / httpx / aiohttp", '`headers={"Idempotency-Key": key}` with `key` made once, before the retry.'),
        (
            "stripe",
            "`stripe.Refund.create(..., idempotency_key=key)`; stripe's own `max_network_retries` adds keys for you, your retry loop does not.",
        ),
        ("boto3 SQS/SNS FIFO", "`MessageDeduplicationId=event.id`."),
    )
    triggers = (EFFECT_WORDS, RETRY_WORDS)

    def check(self, ctx: FileContext) -> Iterator[Report]:
        model, retry, effects = ctx.model, ctx.retry, ctx.effects
        if not retry.contexts:
            return
        helpers = {}
        for effect in effects.effects:
            if unkeyed_effect(effect):
                scope = model.scope_of(effect.call)
                if (
                    isinstance(scope, cst.FunctionDef)
                    and retry.context_of(effect.call) is None
                    and scope not in helpers
                ):
                    helpers[scope] = effect
        for effect in effects.effects:
            if not unkeyed_effect(effect):
                continue
            context = retry.context_of(effect.call)
            if context is not None:
                what = f"{effect.method} " if effect.method else ""
                yield Report(
                    effect.call,
                    f"{what}{effect.operation}() is retried by the {context.label} on line $context without an idempotency key",
                    lines=(("context", context.anchor),),
                )
        for call in model.calls:
            helper = local_callee(model, call)
            effect = helpers.get(helper) if helper is not None else None
            if effect is None:
                continue
            context = retry.context_of(call)
            if context is not None:
                yield Report(
                    call,
                    f"{helper.name.value}() makes {effect.operation}() without an idempotency key (line $effect) "  # type: ignore[union-attr]
                    f"and is called on every attempt of the {context.label} on line $context",
                    lines=(("effect", effect.call), ("context", context.anchor)),
                )


TIMEOUT_EXCEPTIONS = {
    "requests.Timeout",
    "requests.ReadTimeout",
    "requests.exceptions.Timeout",
    "requests.exceptions.ReadTimeout",
    "requests.RequestException",
    "requests.exceptions.RequestException",
    "httpx.TimeoutException",
    "httpx.ReadTimeout",
    "httpx.WriteTimeout",
    "httpx.PoolTimeout",
    "httpx.TransportError",
    "httpx.HTTPError",
    "httpx.RequestError",
    "httpx.NetworkError",
    "socket.timeout",
    "TimeoutError",
    "asyncio.TimeoutError",
    "concurrent.futures.TimeoutError",
    "aiohttp.ServerTimeoutError",
    "aiohttp.ClientError",
    "aiohttp.ClientConnectionError",
    "urllib3.exceptions.ReadTimeoutError",
    "urllib3.exceptions.TimeoutError",
    "botocore.exceptions.ReadTimeoutError",
    "stripe.error.APIConnectionError",
    "stripe.error.StripeError",
    "stripe.APIConnectionError",
    "stripe.StripeError",
    "stripe._error.APIConnectionError",
    "braintree.exceptions.TimeoutError",
    "braintree.exceptions.RequestTimeoutError",
}
_FAILED_STATE = re.compile(r"fail|declin|cancel|reject|error|void|abort", re.IGNORECASE)
_FAILURE_ACTION = re.compile(
    r"refund|release|restock|unreserve|cancel|void|rollback|revert|compensat|mark_?\w*fail|fail_|_fail|set_failed|decline|notify\w*fail|send\w*fail|failure",
    re.IGNORECASE,
)
_FAILURE_ERROR = re.compile(r"fail|declin|reject", re.IGNORECASE)
_UNKNOWN_STATE = re.compile(
    r"unknown|pending|uncertain|indetermin|reconcil|in_?progress|processing|timeout|timed_?out", re.IGNORECASE
)


class TimeoutAsFailure(Rule):
    code = "IDM302"
    confidence = "medium"
    name = "timeout-as-failure"
    summary = "A timeout from a side-effecting call is handled as a definite failure."
    what_it_does = (
        "Flags an `except` clause that catches a timeout (`requests.Timeout`, `ReadTimeout`, "
        "`httpx.TimeoutException`, `socket.timeout`, `TimeoutError`, `asyncio.TimeoutError`) or a base class that "
        "includes timeouts (`requests.RequestException`, `httpx.TransportError`/`HTTPError`, stripe's "
        "`APIConnectionError`/`StripeError`), or `Exception` / a bare `except:`, around a side-effecting call, when the "
        "handler records a definite "
        "failure: sets a failed/declined/cancelled state, refunds, releases stock, cancels, or raises a "
        '"payment failed" error.'
    )
    why = (
        "A timeout carries no information about whether the server acted. Treating it as a failure means the "
        "customer was charged while the order says failed, stock released for goods that were sold, or a refund "
        "issued on top of a capture that went through."
    )
    fix_hint = "Record the outcome as unknown (pending), then retry with the same idempotency key or reconcile with a status query before deciding."
    known_problems = (
        "A failure recorded by a helper whose name does not say so (`finish(order)`) is not recognised, nor a "
        "side-effecting call made through another module's wrapper unless it is declared in `side-effect-calls`."
    )
    bad = """\
import requests

def capture(order):
    try:
        requests.post(f"https://pay.example/captures/{order.payment_id}",
                      headers={"Idempotency-Key": f"capture-{order.id}"}, timeout=10)
    except requests.Timeout:
        order.status = "failed"
        order.save()
"""
    good = """\
import requests

def capture(order):
    try:
        requests.post(f"https://pay.example/captures/{order.payment_id}",
                      headers={"Idempotency-Key": f"capture-{order.id}"}, timeout=10)
    except requests.Timeout:
        order.status = "capture_unknown"  # a reconciliation job asks the processor
        order.save()
"""
    how_to_fix = (
        (
            "any",
            "Set an explicit *unknown* state and let a reconciliation job query the provider (`GET /payments/{id}`).",
        ),
        (
            "stripe",
            "On `APIConnectionError`, retry with the same `idempotency_key`, or look the object up by its metadata.",
        ),
    )
    triggers = (
        (
            "timeout",
            "requestexception",
            "transporterror",
            "httperror",
            "stripeerror",
            "apiconnectionerror",
            "clienterror",
        ),
        EFFECT_WORDS,
    )

    def check(self, ctx: FileContext) -> Iterator[Report]:
        model, effects = ctx.model, ctx.effects
        if not effects.effects:
            return
        with_effects = {model.scope_of(e.call) for e in effects.effects}
        for handler in model.handlers:
            caught = self._timeout_caught(ctx, handler)
            if caught is None:
                continue
            try_node = model.parents.get(handler)
            if not isinstance(try_node, (cst.Try, cst.TryStar)):
                continue
            effect = self._effect_in(ctx, try_node.body, with_effects)
            if effect is None:
                continue
            failure = self._records_failure(ctx, handler)
            if failure is not None:
                yield Report(
                    handler,
                    f"a {caught} from {effect} is handled as a definite failure ({failure}), but the request may have succeeded",
                )

    def _timeout_caught(self, ctx: FileContext, handler: cst.ExceptHandler) -> str | None:
        if handler.type is None:
            return "timeout (a bare except catches it)"
        types = [e.value for e in handler.type.elements] if isinstance(handler.type, cst.Tuple) else [handler.type]
        for expr in types:
            name = ctx.model.qualname(expr) or ""
            if name in TIMEOUT_EXCEPTIONS:
                return name
            if name in ("Exception", "BaseException"):
                return f"timeout (caught by except {name})"
        return None

    def _effect_in(self, ctx: FileContext, block: cst.CSTNode, with_effects: set[cst.CSTNode]) -> str | None:
        model, effects = ctx.model, ctx.effects
        for node in iter_nodes(block):
            if isinstance(node, cst.Call):
                effect = effects.by_call.get(node)
                if effect is not None:
                    return f"{effect.operation}()"
                helper = local_callee(model, node)
                if helper is not None and helper in with_effects:
                    return f"{helper.name.value}()"
        return None

    def _records_failure(self, ctx: FileContext, handler: cst.ExceptHandler) -> str | None:
        model = ctx.model
        nodes = list(iter_nodes(handler.body))
        for node in nodes:
            value = None
            if isinstance(node, cst.Assign) and any(_is_state(model.dotted(t.target)) for t in node.targets):
                value = string_value(node.value)
            elif (
                isinstance(node, cst.Arg)
                and node.keyword is not None
                and _is_state(node.keyword.value)
                and not _is_lookup(model, node)
            ):
                value = string_value(node.value)
            elif isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
                match = _SQL_STATE.search(string_value(node) or "")
                value = match.group(2) if match else None
            if value is not None and _UNKNOWN_STATE.search(value):
                return None
            if value is not None and _FAILED_STATE.search(value):
                return f"state set to {value!r}"
        for node in nodes:
            if isinstance(node, cst.Call):
                dotted = model.dotted(node.func) or ""
                last = dotted.rsplit(".", 1)[-1]
                if (
                    _FAILURE_ACTION.search(last)
                    and not _UNKNOWN_STATE.search(last)
                    and not last.startswith(("log", "debug", "info", "warn", "exception"))
                ):
                    return f"calls {dotted}()"
            elif isinstance(node, cst.Raise) and isinstance(node.exc, cst.Call):
                raised = model.dotted(node.exc.func) or ""
                if _FAILURE_ERROR.search(raised.rsplit(".", 1)[-1]):
                    return f"raises {raised}"
        return None


_SQL_STATE = re.compile(r"\bSET\b.*?\b(status|state)\s*=\s*'(\w+)'", re.IGNORECASE | re.DOTALL)


def _is_lookup(model: ModuleModel, arg: cst.Arg) -> bool:
    """`filter(status="pending")` names the state looked for, not the one recorded."""
    call = model.parents.get(arg)
    return (
        isinstance(call, cst.Call)
        and isinstance(call.func, cst.Attribute)
        and call.func.attr.value in ("filter", "exclude", "get", "where", "filter_by", "select_for_update")
    )


def _is_state(name: str | None) -> bool:
    return name is not None and bool(
        re.search(r"(^|[._])(status|state|payment_status|order_status|result|outcome)$", name)
    )
