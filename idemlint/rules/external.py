"""Family 3xx: side-effecting calls to other systems, retried or timed out unsafely."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint.analysis.direct_facts import own_params
from idemlint.analysis.duplicate_answers import absorbed_through
from idemlint.analysis.effects import SideEffect
from idemlint.analysis.model import iter_nodes
from idemlint.analysis.policy.sorting import may_retry_a_timeout
from idemlint.analysis.request_methods import caller_naming_a_write, callers_are_elsewhere, sent_through_from_outside
from idemlint.analysis.summaries import (
    Callee,
    Chain,
    Step,
    chain_origin,
    passed_arguments,
    related_steps,
    via,
)
from idemlint.analysis.timeouts import only_rolls_back, records_failure, timeout_caught
from idemlint.analysis.unsent_keys import unsent_keys
from idemlint.knowledge.retries import URLLIB3_RETRY
from idemlint.knowledge.triggers import EFFECT_WORDS, REQUEST_CORE, RETRY, TIMEOUT_WORDS, TRANSPORT_METHOD_SETTINGS
from idemlint.rule import Report, Rule

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.retry import RetryContext
    from idemlint.context import FileContext
else:
    from idemlint._lazy import LazyModule

    cst = LazyModule("libcst", globals(), "cst")


def unkeyed_effect(effect: SideEffect | None) -> bool:
    return effect is not None and not effect.retry_safe and effect.keyed is False


class UnkeyedRetriedSideEffect(Rule):
    code = "IDM301"
    stakes = "external"
    confidence = "medium"
    name = "unkeyed-retried-side-effect"
    summary = "A non-idempotent external call is retried without an idempotency key."
    what_it_does = (
        "Flags a side-effecting call to another system made inside a retry context (as IDM001 lists them: loops, "
        "decorators, retried tasks, a lambda or function handed to a helper that calls it once per attempt; not a "
        "supervisor restarting a service, as IDM203 says) "
        "without an idempotency key in its arguments or headers: HTTP POST or PATCH through requests, httpx (sync and async), aiohttp or "
        "urllib3; payment SDK calls that create, charge, capture, refund, transfer or pay (stripe, braintree, "
        "adyen, square, ...); boto3 `send_message`/`publish` to FIFO queues and topics without "
        "`MessageDeduplicationId`. A urllib3 `Retry(allowed_methods=...)` (also through `**retry_args`) that lets POST or PATCH be re-sent "
        "retries them at the transport (low confidence), also when it is a project's own subclass of `Retry` built in another module (through the project index), and where a project's subclass of `Retry` sets them "
        'for its callers (`kwargs["allowed_methods"] = ... | {"POST"}` before `super().__init__(**kwargs)`); '
        "not in a client class that sends nothing a repeat would do twice through it (only GETs, or a POST to a "
        "search path, held in `self.search_url`). "
        "A helper that makes such a call (in this module or, through the project "
        "index, in another, up to four calls deep) and is called on every attempt is reported at that call; so "
        "is a method a project class inherits from an SDK client it extends (`class Campaigns(BrazeClient)`, "
        "then `Campaigns().send_campaign_message(...)`), and a service looked up by its interface "
        "(`request.find_service(IHelpDesk)`, `getUtility(...)`) or typed as a base class the index does not "
        "summarise, when one of its implementations makes such a call. A request core whose HTTP method is "
        "its parameter (`def _request(self, method, path)`) is such a call where a caller names POST or PATCH "
        "(`self._request('POST', ...)`, `http_request(verb='POST')`) or leaves out a parameter whose default "
        "is one (`def send(url, method='POST')`), through forwarding helpers, and a read where it names GET. "
        "A request core that retries itself (a loop around `self.session.request(method, ...)`, or around a "
        "helper it passes its `method` to) is reported at the retried request when a caller in the same module "
        "names POST or PATCH (`def post(self, path): return self._call('POST', path)`). A request made in the "
        "retry itself, whose method no call in the module names (a generated client's `HttpClient.request(path, "
        "method, ...)`, called from other modules), is reported at low confidence as one that may be a POST, "
        "unless the function is named for a read (`fetch`, `getResource`), a caller here chooses by the method "
        "whether to call it (`if method in ('GET', 'HEAD'):`), or its `try` retries only a connection never made "
        "(`except httpx.ConnectError:`, with no failed answer sending it round). The request may be "
        "the client's method looked up by name (`getattr(self.session, method)(url)`) or a request function "
        "of a transport the module cannot see, given the method by keyword "
        "(`self._backend.http_request(method=verb, ...)`). "
        "A key made once per logical call before a retry loop (`options.idempotency_key = make_key()`) and put "
        "only in a header whose name is an attribute no file of the project sets to anything but None "
        "(`headers[self._idempotency_header] = options.idempotency_key`, the base setting it to None and no "
        "client naming it; only production files count, and a key another file reads is left alone, since that "
        "file may send it) is reported where it is made: it is never sent. "
        "Calls whose headers are built elsewhere (so a key may "
        "be there) are not reported, except a request core's options (`**opts`, a helper's headers) in a "
        "module that names no idempotency key anywhere: the callers that name POST there send none. "
        "Writes a repeat leaves as the first one left them are not reported: PUT and DELETE, an OAuth token "
        "request, a call that declares itself idempotent (`idempotent=True`), a PATCH whose body is a dict of "
        'literal fields with no relative change (`{"status": "errored"}`, not `{"delta": n}` or JSON '
        "Patch's `op`), a request whose path's last part is one verb of a computation that keeps nothing "
        "(`/predict`, `/v2/translate`, `/embed`, or a custom method's verb in Google's `resource:verb` style, `models/{m}:embedContent`; not a noun a server may keep: `/rest/v1/embeddings`, Replicate's "
        "`/v1/predictions`), and a request "
        "whose path or calling function names a removal, a revocation, a cache purge or a read "
        "(`/unlink_users/`, `revoke_token()`, `/purge/{key}`, `/_search`, OAuth's `/introspect`, an RPC path whose last part starts with a reading verb: "
        "`/2/sharing/get_shared_link_file`, not `get_or_create_account`; a project function so named passes no side "
        "effect on to its callers: `search()` posting a vector query through `_request('POST', ...)`), or a GraphQL "
        'query it posts (`json={"query": "query ..."}`; a `mutation` is reported), or a write sent only when a '
        "lookup of the same resource, made first on each attempt, found nothing "
        '(`rules = requests.get(f"{api}/rules").json()`, then `if not rules: requests.post(f"{api}/rules", ...)`, '
        "or `if found: return` before it: create-if-absent, a repeat looks first), or a write in a `try` of its own whose handler "
        "takes the server's duplicate answer as success (`except AlreadyExists: pass`, `if e.status_code == 409: "
        'return`, `if "already exists" not in str(e): raise`; also in a helper the retry calls): the server '
        "refuses the second one. Nor is a call a retry loop makes on its way "
        "out, in a block that then always leaves it (`if attempt == last: report(); raise`): it runs once, not "
        "on each attempt. Nor is a request a loop sends again only after the "
        "server turned it away: a loop that leaves on every answer but a 429 (`if r.status_code != 429 or n > "
        "retries: break`), with no handler or `continue` that sends it round for anything else, or a function that calls itself again only on an answer refusing the credentials "
        "and after asking for new ones (`if r.status_code == requests.codes.unauthorized and retry and self.login(): return self._fetch(..., retry=retry - 1)`); nor one a retry "
        "sends again only for work the code itself deems idempotent (its handler raises for the others: `if "
        "operation in NON_IDEMPOTENT_OPERATIONS or attempt == last: raise`); nor a retried task's last act, in a "
        "`try` whose handler swallows every failure, with nothing after it but log lines (`try: "
        "client.post(webhook, ...) except Exception: log.error(...)`): no retry follows a post that was made."
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
    triggers = ((*EFFECT_WORDS, *TRANSPORT_METHOD_SETTINGS, REQUEST_CORE), (*RETRY, "while ", "range(", "autoretry"))
    needs_project = True
    project_facts = ("unkeyed_effect", "verb_effect")
    project_groups = frozenset({0})

    def check(self, ctx: FileContext) -> Iterator[Report]:
        model, retry, effects = ctx.model, ctx.retry, ctx.effects
        yield from _transport_retries_of_writes(ctx)
        if not retry.contexts:
            return
        for unsent in unsent_keys(model, retry, ctx.project, ctx.module_name) if ctx.indexed else ():
            yield Report(
                unsent.made,
                f"this idempotency key is never sent: the only header it goes in (line $sink) is named by "
                f"`{unsent.attribute}`, which no file of the project sets to anything but None (line $unset); every "
                f"attempt of {unsent.context.named} on line $context goes without a key",
                lines=(("context", unsent.context.anchor), ("sink", unsent.sink), ("unset", unsent.unset)),
                suggestion=f"Set `{unsent.attribute}` to the header the API reads (such as `Idempotency-Key`), "
                "or do not retry writes.",
                evidence=KEY_NEVER_SENT,
            )
        for effect in effects.effects:
            if not unkeyed_effect(effect) or _sends_by_its_summary(ctx, effect.call):
                continue  # a project function: what it sends is known from its summary, below
            context = retry.repeating_context_of(effect.call)
            if context is not None:
                what = f"{effect.method} " if effect.method else ""
                yield Report(
                    effect.call,
                    f"{what}{effect.operation}() is retried by {context.named} on line $context without an idempotency key",
                    lines=(("context", context.anchor),),
                )
        for request in effects.verb_requests:  # the method is the retrying function's own parameter
            if _sends_by_its_summary(ctx, request.call):
                continue  # a project function: its summary says what it sends, below
            context = retry.repeating_context_of(request.call)
            function = request.function or ctx.model.enclosing_function(request.call)
            writer = caller_naming_a_write(ctx.model, request.call, request.parameter) if context else None
            if context is not None and writer is not None:
                yield Report(
                    request.call,
                    f"{request.operation}() sends the method its caller names in `{request.parameter}`, and "
                    f"{writer[1]} on line $writer names {writer[2]}: retried by {context.named} on line $context "
                    "without an idempotency key",
                    lines=(("writer", writer[0]), ("context", context.anchor)),
                    evidence=CALLER_NAMES_THE_METHOD,
                )
            elif context is not None and callers_are_elsewhere(ctx.model, request.call, request.parameter, function):
                yield Report(
                    request.call,
                    f"{function.name.value if function else 'the function'}() is handed its HTTP method in "
                    f"`{request.named}` by callers outside this module, so {request.operation}() may send a "
                    f"POST: retried by {context.named} on line $context without an idempotency key",
                    lines=(("context", context.anchor),),
                    confidence="low",
                    evidence=CARRIED_ELSEWHERE if request.attribute else CALLERS_ELSEWHERE,
                )
        for call in model.calls:
            context = retry.repeating_context_of(call)
            callee = ctx.callee(call) if context is not None else None
            chain, operation = callee.summary.unkeyed_effect_for(passed_arguments(call)) if callee else (None, "")
            if (
                callee is not None
                and not operation.lower().endswith("patch")
                and absorbed_through(model, call, callee.name)
            ):
                continue  # `except Conflict: pass` around `add_member(...)`: the server refuses the second one
            if callee is not None and context is not None and chain is None:
                yield from _retried_request_core(ctx, call, callee, context)
            if callee is None or chain is None or context is None:
                continue
            origin, lines = chain_origin(chain, "effect")
            yield Report(
                call,
                f"{callee.name}() makes {operation}() without an idempotency key ({origin}"
                f"{via(chain)}) and is called on every attempt of {context.named} on line $context",
                lines=(*lines, ("context", context.anchor)),
                related=related_steps(callee, chain),
            )


CALLER_NAMES_THE_METHOD = "a retried request whose method a caller names"
KEY_NEVER_SENT = "a key put only in a header the project never names"
CALLERS_ELSEWHERE = "a retried request whose method its callers elsewhere name"
CARRIED_ELSEWHERE = "a retried request whose method rides in what callers elsewhere build"  # measured apart


def _sends_by_its_summary(ctx: FileContext, call: cst.Call) -> bool:
    """A project function whose summary says what it sends (it calls another system, or sends
    a request whose method it is handed). A summary that knows only other facts of it (a wait,
    a status error it lets out) says nothing of its requests: the call is judged by its name."""
    found = ctx.callee(call)
    return found is not None and (found.summary.effect is not None or found.summary.verb_effect is not None)


def _retried_request_core(ctx: FileContext, call: cst.Call, callee: Callee, context: RetryContext) -> Iterator[Report]:
    """A retried call to a request helper that passes on the method the enclosing function was
    given (`self._send_once(verb, url)` in `_call(self, verb, url)`): a POST wherever a caller
    in this module names one."""
    function = ctx.model.enclosing_function(call)
    if function is None:
        return
    forwarded = callee.summary.verb_binding(passed_arguments(call, own_params(function)))[1]
    writer = caller_naming_a_write(ctx.model, call, forwarded) if forwarded else None
    if writer is None or callee.summary.verb_effect is None:
        return
    origin, lines = chain_origin(callee.summary.verb_effect, "effect")
    yield Report(
        call,
        f"{callee.name}() makes {callee.summary.verb_operation}() ({origin}) with the method given in "
        f"`{forwarded}`, and {writer[1]} on line $writer names {writer[2]}: retried by {context.named} on line "
        "$context without an idempotency key",
        lines=(*lines, ("writer", writer[0]), ("context", context.anchor)),
        related=related_steps(callee, callee.summary.verb_effect),
        evidence=CALLER_NAMES_THE_METHOD,
    )


def _transport_retries_of_writes(ctx: FileContext) -> Iterator[Report]:
    """urllib3 `Retry(allowed_methods=...)` that lets POST or PATCH be re-sent: every request of
    that kind through the session is retried at the transport, where no key is added. Low
    confidence: a call that sends its own key, or an endpoint that dedupes, is safe."""
    for policy in ctx.policies.policies:
        for verdict in policy.non_retryable_statuses:
            if verdict.kind == "unsafe-methods" and _sends_a_write(ctx, verdict.node):
                methods = ", ".join(verdict.methods) or "every method, POST and PATCH included"
                yield Report(
                    verdict.node,
                    f"Retry(allowed_methods=...) retries {methods} at the transport: a request that changes "
                    "something is re-sent without an idempotency key",
                    confidence="low",
                    evidence="a transport's retry settings",
                )


# a handler whose only failure action is a database rollback: measured apart, `low` until measured
ROLLED_BACK = "a database rollback in the handler"


class TimeoutAsFailure(Rule):
    code = "IDM302"
    stakes = "external"
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
        '"payment failed" error. A handler whose only such act is a database rollback (`db.rollback()`) is '
        "reported at `low` and measured apart: the local transaction is rightly undone, and what is lost is the "
        "local record of a remote call that may have acted. A request that leaves the server as it was is no "
        "side effect here, whatever its method: an OAuth token request for a new token (a token endpoint, a "
        "`grant_type` in its body; not `refresh_token`, which may rotate the old token away), a GraphQL query, a "
        "path whose last part names a search, a lookup, a read or a computation (`/orders/_search`, "
        "`/oauth/introspect`, `/v1/listInvoices`, `/predict`; not a word in the host)."
    )
    why = (
        "A timeout carries no information about whether the server acted. Treating it as a failure means the "
        "customer was charged while the order says failed, stock released for goods that were sold, or a refund "
        "issued on top of a capture that went through."
    )
    fix_hint = "Record the outcome as unknown (pending), then retry with the same idempotency key or reconcile with a status query before deciding."
    known_problems = (
        "A failure recorded by a helper whose name does not say so (`finish(order)`) is recognised when the helper, "
        "in this module or (with the project index) another, sets a failed state on every call; one that records it "
        "only on some branch is not. A helper of this module named for a failure action (`_refund_failure()`) "
        "counts only if its body does more than print or log. A side-effecting call behind a wrapper whose class "
        "cannot be seen is not recognised unless it is declared in `side-effect-calls` (a service looked up by "
        "its interface, `find_service(IPayments)`, is followed to its implementations). A catch-all handler that "
        "sorts what it caught and retries some of it (`if is_transient(exc): raise self.retry(exc=exc)`, or "
        "`continue` in a retry loop) is not reported: whether a timeout is retried there is its classifier's to "
        "say, which idemlint does not read. One whose retry is only for classes that hold no timeout (`if "
        "isinstance(exc, HTTPError) and ...`) is."
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
    triggers = (TIMEOUT_WORDS, EFFECT_WORDS)
    needs_project = True
    project_facts = ("effect", "verb_effect")
    project_groups = frozenset({1})

    def check(self, ctx: FileContext) -> Iterator[Report]:
        model = ctx.model
        for handler in model.handlers:
            caught = timeout_caught(ctx.model, handler)
            if caught is None:
                continue
            try_node = model.parents.get(handler)
            if not isinstance(try_node, (cst.Try, cst.TryStar)):
                continue
            if caught.startswith(("timeout (caught by", "timeout (a bare")):
                earlier = try_node.handlers[: list(try_node.handlers).index(handler)]
                if any(timeout_caught(ctx.model, h) for h in earlier):
                    continue  # a catch-all after a clause that already takes the timeouts
                if isinstance(handler, cst.ExceptHandler) and may_retry_a_timeout(ctx.model, handler):
                    continue  # `if is_transient(exc): raise self.retry(...)`: a timeout may be among those retried

            effect = self._effect_in(ctx, try_node.body)
            if effect is None:
                continue
            failure = records_failure(ctx.model, handler)
            related: tuple[Step, ...] = ()
            lines: tuple[tuple[str, cst.CSTNode], ...] = ()
            if failure is None:
                found = self._failure_helper(ctx, handler)
                if found is None:
                    continue
                callee, chain = found
                origin, lines = chain_origin(chain, "failure")
                failure = f"calls {callee.name}(): {chain[-1].text} {origin}{via(chain)}"
                related = related_steps(callee, chain, verb="")
            rolled_back = not related and only_rolls_back(ctx.model, handler)
            yield Report(
                handler,
                f"{'an' if caught[:1].lower() in 'aeiou' else 'a'} {caught} from {effect} is handled as a definite "
                f"failure ({failure}), but the request may have succeeded",
                lines=lines,
                related=related,
                confidence="low" if rolled_back else None,
                evidence=ROLLED_BACK if rolled_back else None,
            )

    def _failure_helper(self, ctx: FileContext, handler: cst.CSTNode) -> tuple[Callee, Chain] | None:
        """`finish(order)` in the handler, where `finish` sets a failed state on every call
        (in this module or, with the project index, in another)."""
        for node in ctx.model.iter_nodes(handler):
            if isinstance(node, cst.Call):
                callee = ctx.callee(node)
                if callee is not None and callee.summary.records_failure:
                    return callee, callee.summary.records_failure
        return None

    def _effect_in(self, ctx: FileContext, block: cst.CSTNode) -> str | None:
        effects = ctx.effects
        for node in iter_nodes(block):
            if isinstance(node, cst.Call):
                effect = effects.by_call.get(node)
                if effect is not None and effect.changes_nothing:
                    continue  # a token request, a search: a timeout there hides no effect
                if effect is not None:
                    return f"{effect.operation}()"
                callee = ctx.callee(node)
                if callee is not None and callee.summary.effect_for(passed_arguments(node)):
                    return f"{callee.name}()"
        return None


def _sends_a_write(ctx: FileContext, setting: cst.CSTNode) -> bool:
    """A client class that retries writes at its transport sends one: a request that is not
    safe to repeat and carries no key, or one whose method a caller names. A client that only
    reads, or only posts a search, re-sends nothing that acts. Outside a class the session may
    go anywhere."""
    model = ctx.model
    owner = model.enclosing_class(setting)
    if owner is None or any(model.qualname(base.value) in URLLIB3_RETRY for base in owner.bases):
        return True  # a project's own `Retry`: a policy for whoever mounts it
    if sent_through_from_outside(model, owner):
        return True
    effects = ctx.effects
    return any(
        ctx.model.is_inside(e.call, owner) and not e.retry_safe and e.keyed is not True for e in effects.effects
    ) or any(ctx.model.is_inside(r.call, owner) for r in effects.verb_requests)
