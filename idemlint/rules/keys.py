"""Family 0xx: idempotency keys that do not identify one logical operation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint.analysis.flow import origin_calls
from idemlint.analysis.key_fixes import hoist_out_of_loop, pass_key_to_helper
from idemlint.analysis.keys import (
    clock_name,
    digest_name,
    fresh_value_name,
    hashed_content,
    made_once_and_kept,
)
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.summaries import Callee, Chain, chain_origin, related_steps, via
from idemlint.knowledge.triggers import RETRY
from idemlint.rule import Report, Rule

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.retry import RetryContext
    from idemlint.config import Config
    from idemlint.context import FileContext

SINK_WORDS = (
    "idempot",
    "dedup",
    "client_token",
    "clienttoken",
    "client_request_token",
    "clientrequesttoken",
    "request_id",
    "request-id",
    "requestid",
    "idem_key",
)
FRESH_WORDS = ("uuid", "token_", "urandom", "random", "ulid", "nanoid", "objectid")


class KeyRule(Rule):
    """Key rules add the user's own key names to the pre-filter. A key guards a call to another
    system, so what a wrong one puts at stake is that call's effect."""

    stakes = "external"

    @classmethod
    def trigger_groups(cls, config: Config) -> tuple[tuple[str, ...], ...]:
        extra = tuple(n.lower() for n in config.vocabulary.key_names)
        return tuple(group + extra if group is SINK_WORDS else group for group in cls.triggers)


class KeyRegeneratedPerAttempt(KeyRule):
    code = "IDM001"
    name = "key-regenerated-per-attempt"
    summary = "A fresh random idempotency key is generated inside a retry loop, decorator or task."
    what_it_does = (
        "Flags a fresh random value (`uuid.uuid4()`, `uuid1`/`uuid7`, `secrets.token_*()`, `os.urandom`, "
        "`random.*`, `ulid`, `nanoid`) that is produced inside a retry context and reaches an idempotency-key "
        "sink: an `Idempotency-Key` header, an `idempotency_key=` argument, `MessageDeduplicationId`, "
        "`ClientToken` and the like. Retry contexts are hand-written retry loops, retry decorators "
        "(tenacity, backoff, stamina, retrying, retry; also bound once to a module-level name, here or in a module "
        "it is imported from: `api_retry = retry(...)`, then `@api_retry`; not one that makes a single attempt, "
        "`stop_after_attempt(1)`, nor one of these but stamina's applied directly to a generator function, `yield` in its "
        "body: the call hands back the generator and nothing is attempted again), tenacity's `Retrying` iterator, "
        "and task-queue tasks that "
        "are retried (Celery `autoretry_for`, also from a `base=` Task class, and `self.retry()`, also in a helper "
        "or context manager the task hands itself to; Dramatiq actors, Huey `retries=`), and a lambda or function "
        "handed to something that calls it once per attempt: a project function that calls its parameter inside a "
        "retry loop or retry decorator (`with_retries(lambda: ...)`, in this module or, through the project index, "
        "another), `tenacity.Retrying(...)(fn)`, `tenacity.retry(...)(fn)`, `backoff.on_exception(...)(fn)`, "
        "`retry_call(fn)`; `functools.partial(...)` arguments are made once, when it is built. A helper that generates the key "
        "(in this module, or, through the project index, in another: up to four calls deep) and is called on every "
        "attempt is reported at that call, with the chain to the key's origin; a call that passes the key the "
        "helper would otherwise make (`key or uuid4()`, `if 'Idempotency-Key' not in headers`) is not. Nor is a key "
        "stored only where its holder has none yet and kept for every next attempt: `if key is None: key = uuid4()` "
        "in a loop that binds `key` (or, for `row.key`, `row`) nowhere else, and in a task or decorated function, "
        "which starts over, `if not payment.idempotency_key: payment.idempotency_key = uuid4(); payment.save()`, the "
        "row's own save storing the key as the `if`'s next call, before the key is sent, outside `transaction.atomic()`."
    )
    why = (
        "An idempotency key tells the server that two requests are the same logical operation. A key "
        "generated per attempt is different on every retry, so the server sees each retry as a new operation: "
        "the timeout that triggered the retry may have hidden a success, and the retry charges, sends or "
        "creates a second time."
    )
    fix_hint = (
        "Generate the key once per logical operation, before the retry loop (or in the caller that owns the "
        "operation, persisted with it for task retries), and pass the same key on every attempt."
    )
    known_problems = (
        "Keys that travel through class attributes or containers built "
        "elsewhere are not followed, nor calls whose receiver's class cannot be seen (unknown stays unknown); "
        "the flake8 plugin has no project index and follows helpers of the same module only. A retry helper of "
        "another module is known by the position of the parameter it calls (not a keyword), and only when it calls "
        "the parameter itself or hands it to a retry library or a helper of its own module."
    )
    bad = """\
import uuid, requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

@retry(retry=retry_if_exception_type(requests.ConnectionError),
       stop=stop_after_attempt(5), wait=wait_random_exponential(max=10))
def charge(order):
    key = str(uuid.uuid4())  # a new key on every attempt
    return requests.post("https://pay.example/charges", json={"amount": order.total},
                         headers={"Idempotency-Key": key}, timeout=10)
"""
    good = """\
import uuid, requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

def charge(order):
    key = str(uuid.uuid4())  # once per logical operation
    return _post_charge(order, key)

@retry(retry=retry_if_exception_type(requests.ConnectionError),
       stop=stop_after_attempt(5), wait=wait_random_exponential(max=10))
def _post_charge(order, key):
    return requests.post("https://pay.example/charges", json={"amount": order.total},
                         headers={"Idempotency-Key": key}, timeout=10)
"""
    how_to_fix = (
        ("hand-written loop", "Move `key = str(uuid.uuid4())` above the `for attempt in range(...)` line."),
        (
            "tenacity / backoff / stamina",
            "Generate the key in the caller and pass it to the decorated function as a parameter.",
        ),
        (
            "Celery",
            "Create the key when the task is enqueued (`charge.delay(order_id, key=str(uuid4()))`) or derive it from the order id; `self.retry()` re-sends the same arguments.",
        ),
        (
            "stripe",
            "`stripe.PaymentIntent.create(..., idempotency_key=key)` with the key made once per payment attempt by the user, not per network try.",
        ),
    )
    fix_safety = (
        "Safe fix for hand-written retry loops and tenacity/stamina retry iterators: the key's generation moves "
        "to just before the loop (a key made inline gets an `idempotency_key` variable and the call that sends it "
        "stays where it was), only when the key is made of nothing but key-making calls (`uuid4()`, `str()`, "
        "`.hex`, `secrets.token_*`), literals and names the loop does not bind, and nothing between the key and "
        "the loop repeats it per item (an inner loop, a comprehension). Every attempt then sends the same value and "
        "nothing else moves; a key that is transformed by other calls is reported without a fix. No "
        "fix for retry decorators and retried tasks: the key has to come from the caller, which only the author "
        "can change. Unsafe fix for a same-module helper that makes the key on every attempt: the helper gains an "
        "`idempotency_key=None` parameter it uses when given, and the caller makes the key once before the loop "
        "and passes it (unsafe because the helper's signature changes)."
    )
    triggers = (FRESH_WORDS, (*RETRY, "for ", "while ", "task"), SINK_WORDS)
    needs_project = True
    project_facts = ("returns_key", "sends_key")
    project_groups = frozenset({0, 2})

    def check(self, ctx: FileContext) -> Iterator[Report]:
        model, retry = ctx.model, ctx.retry
        if not retry.contexts:
            return
        reported: set[cst.CSTNode] = set()
        for sink in ctx.sinks.sinks:
            for call in origin_calls(model, sink.value):
                if call in reported:
                    continue
                context = retry.context_of(call)
                if context is None or not model.is_inside(sink.value, context.node):
                    continue
                fresh = fresh_value_name(model, call)
                if fresh is not None and clock_name(model, call) is not None:
                    continue  # a clock reading: IDM002 reports it, naming the retry (one finding a token)
                if fresh is not None and context.kind == "recursive" and _defaults_a_parameter(model, call):
                    continue  # `key = key or uuid4()`: made once, then passed down to every retry
                if fresh is not None and all(
                    made_once_and_kept(model, call, c.kind, c.node, sink.value)
                    for c in retry.contexts
                    if model.is_inside(call, c.node)
                ):
                    continue  # `if not row.key: row.key = uuid4(); row.save()`: every next attempt finds it
                if fresh is not None:
                    reported.add(call)
                    yield Report(
                        call,
                        f"{fresh} runs on every attempt of {context.named} on line $context, "
                        f"so {sink.where} is a new key on each retry",
                        suggestion=_CONTEXT_HINTS.get(context.kind, _DECORATOR_HINT),
                        fix=hoist_out_of_loop(model, ctx.module, call, sink.value, context),
                        lines=(("context", context.anchor),),
                    )
                    continue
                callee = ctx.callee(call)
                if callee is not None and callee.summary.returns_key and not callee.summary.supplied_by(call):
                    reported.add(call)
                    yield self._helper_report(ctx, call, callee, callee.summary.returns_key, context)
        for call in model.calls:
            if call in reported:
                continue
            callee = ctx.callee(call)
            if callee is None or not callee.summary.sends_key or callee.summary.supplied_by(call):
                continue
            context = retry.context_of(call)
            if context is not None:
                reported.add(call)
                yield self._helper_report(ctx, call, callee, callee.summary.sends_key, context)

    def _helper_report(
        self, ctx: FileContext, call: cst.Call, callee: Callee, chain: Chain, context: RetryContext
    ) -> Report:
        origin, lines = chain_origin(chain, "origin")
        fix = None
        if callee.function is not None and len(chain) == 1 and chain[0].node is not None:
            fix = pass_key_to_helper(ctx.model, ctx.module, call, callee.function, chain[0].node, context)
        return Report(
            call,
            f"{callee.name}() makes a new idempotency key ({chain[-1].text} {origin}{via(chain)}) and is called on "
            f"every attempt of {context.named} on line $context",
            suggestion="Call the key-making code once before retrying and pass the key in; "
            f"{callee.name}() should take the key as a parameter.",
            fix=fix,
            lines=(*lines, ("context", context.anchor)),
            related=related_steps(callee, chain),
        )


def _defaults_a_parameter(model: ModuleModel, call: cst.Call) -> bool:
    """The call only fills a parameter the caller left out: `key or str(uuid4())`."""
    import libcst as cst

    for ancestor in model.ancestors(call):
        if isinstance(ancestor, cst.BooleanOperation) and isinstance(ancestor.operator, cst.Or):
            left = ancestor.left
            return isinstance(left, cst.Name) and any(
                b.kind == "param" for b in model.bindings_of(model.scope_of(call), left.value)
            )
        if not isinstance(ancestor, (cst.Call, cst.Arg, cst.Attribute)):
            return False
    return False


_DECORATOR_HINT = (
    "The whole function is retried, so the key must come from outside it: generate it in the caller that owns "
    "the operation (or when the task is enqueued) and pass it in as a parameter."
)
_CONTEXT_HINTS: dict[str, str | None] = {
    "loop": None,  # the fix moves the key above the loop
    "iterator": None,
    "callable": "The helper calls this lambda or function once per attempt, so the key must be made outside it: "
    "generate it before handing the work to the helper and let the lambda use it (or pass it in).",
}


CLOCK_WORDS = ("time", "now(", "today(", "utcnow", "monotonic", "perf_counter")


class ClockInKey(KeyRule):
    code = "IDM002"
    name = "clock-in-key"
    summary = "A clock reading flows into an idempotency key."
    what_it_does = (
        "Flags a clock call (`time.time()`, `time.time_ns()`, `time.monotonic()`, `time.perf_counter()`, "
        "`datetime.now()`/`utcnow()`/`today()`, `date.today()`, `django.utils.timezone.now()`, `arrow.now()`, "
        "`pendulum.now()`) whose value reaches an idempotency-key sink, alone or inside an f-string, `%`, "
        "`.format()`, `str()`, concatenation or a hash. It does not need a retry context: any retry or "
        "redelivery of the operation reads the clock again. Inside a retry context the message names it, and "
        "IDM001 leaves the clock reading to this rule: one finding a token."
    )
    why = (
        "A key must be the same on every attempt of one operation. A clock reading is different on every "
        "retry and on every redelivery of the message that triggered the call, so every retry becomes a new "
        "operation; and two different operations in the same tick can collide."
    )
    fix_hint = "Use an identifier created once per logical operation (a stored UUID or a business id); keep timestamps out of keys."
    known_problems = (
        "Day-granular keys (`date.today()`) are reported too: a retry or redelivery after midnight makes a new "
        "operation. A clock passed through another module before it reaches the key is not followed."
    )
    bad = """\
import time, requests

def refund(payment):
    key = f"refund-{payment.id}-{int(time.time())}"
    return requests.post("https://pay.example/refunds", json={"payment": payment.id},
                         headers={"Idempotency-Key": key}, timeout=10)
"""
    good = """\
import requests

def refund(payment):
    key = f"refund-{payment.id}"  # the same for every attempt at this refund
    return requests.post("https://pay.example/refunds", json={"payment": payment.id},
                         headers={"Idempotency-Key": key}, timeout=10)
"""
    how_to_fix = (
        (
            "requests / httpx",
            'Build the header from the operation\'s id (`f"refund-{refund.id}"`) or from a UUID stored with the operation.',
        ),
        ("boto3 SQS FIFO", "Set `MessageDeduplicationId` to the business event id, not to a timestamp."),
        ("stripe", "`idempotency_key=` should be created once when the user starts the payment and saved with it."),
    )
    triggers = (CLOCK_WORDS, SINK_WORDS)

    def check(self, ctx: FileContext) -> Iterator[Report]:
        model = ctx.model
        reported: set[cst.CSTNode] = set()
        for sink in ctx.sinks.sinks:
            for call in origin_calls(model, sink.value):
                clock = clock_name(model, call)
                if clock is not None and call not in reported:
                    reported.add(call)
                    context = ctx.retry.context_of(call) if ctx.retry.contexts else None
                    if context is not None and model.is_inside(sink.value, context.node):
                        yield Report(
                            call,
                            f"{clock} flows into {sink.where} and runs on every attempt of {context.named} on "
                            "line $context: every retry reads a new time, so each attempt is a new operation",
                            lines=(("context", context.anchor),),
                        )
                        continue
                    yield Report(
                        call,
                        f"{clock} flows into {sink.where}: every retry or redelivery reads a new time, so it is a new operation",
                    )


DIGEST_WORDS = (
    "hashlib",
    "hash(",
    "uuid3",
    "uuid5",
    "crc32",
    "adler32",
    "xxhash",
    "mmh3",
    "blake3",
    "hmac",
    "sha256",
    "md5",
    "sha1",
)


class ContentHashKey(KeyRule):
    code = "IDM003"
    confidence = "medium"
    name = "content-hash-key"
    summary = "An idempotency key is a digest of the request content."
    what_it_does = (
        "Flags a digest (`hashlib.*`, `hash()`, `uuid.uuid3/uuid5`, `zlib.crc32`, `xxhash`, `mmh3`...) of request "
        "content used as an idempotency key: a hash over the body, payload or params sent with the same call, "
        "over `json.dumps(...)`/`repr(...)` of them, or over variables named like request content; and a "
        'name-based UUID whose name is made of request content only (`uuid5(NS, f"{payout.iban}:{payout.amount}")`). '
        'Digests of stable business identifiers (`sha256(order_id)`, `uuid5(NS, f"refund-{refund.id}")`, a name '
        "that includes the operation's id or the caller's reference) are not reported."
    )
    why = (
        'A key says "this is the same operation". Two intended, identical operations (the same amount to the '
        "same person twice, a second identical order) have the same content and so the same hash: the server "
        "drops the second as a duplicate. Content hashes are good for detecting key misuse (same key, "
        "different body), not as the key itself."
    )
    fix_hint = "Use a client-generated key per logical operation (a UUID created and stored when the operation starts); keep a body hash, if any, as a separate check."
    known_problems = (
        "Whether a variable holds request content is judged from where it comes from and from its name "
        "(`payload`, `body`, `params`, `data`...); a content hash built in another module is not followed."
    )
    bad = """\
import hashlib, json, requests

def transfer(payload):
    key = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    return requests.post("https://bank.example/transfers", json=payload,
                         headers={"Idempotency-Key": key}, timeout=10)
"""
    good = """\
import requests

def transfer(transfer_id, payload):
    # transfer_id was created once, when the user asked for this transfer
    return requests.post("https://bank.example/transfers", json=payload,
                         headers={"Idempotency-Key": f"transfer-{transfer_id}"}, timeout=10)
"""
    how_to_fix = (
        (
            "requests / httpx",
            "Send `Idempotency-Key: <uuid stored with the operation>`; send a body digest, if the API wants one, in its own header.",
        ),
        (
            "boto3 SQS FIFO",
            "Content-based deduplication has the same flaw; prefer an explicit `MessageDeduplicationId` from the event id.",
        ),
    )
    triggers = (DIGEST_WORDS, SINK_WORDS)

    def check(self, ctx: FileContext) -> Iterator[Report]:
        model = ctx.model
        reported: set[cst.CSTNode] = set()
        for sink in ctx.sinks.sinks:
            for call in origin_calls(model, sink.value):
                digest = digest_name(model, call)
                if digest is None or call in reported:
                    continue
                content = hashed_content(model, call, sink)
                if content is not None:
                    reported.add(call)
                    yield Report(
                        call,
                        f"{digest} of request content ({content}) is used as {sink.where}: identical intended operations collapse into one",
                    )
