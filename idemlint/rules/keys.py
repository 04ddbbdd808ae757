"""Family 0xx: idempotency keys that do not identify one logical operation."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint.analysis.flow import origin_calls
from idemlint.analysis.keys import (
    clock_name,
    digest_name,
    fresh_value_name,
    hashed_content,
)
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.summaries import Callee, Chain, chain_origin, related_steps, via
from idemlint.rule import Report, Rule
from idemlint.triggers import RETRY

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.retry import RetryContext
    from idemlint.config import Config
    from idemlint.context import FileContext
    from idemlint.rule import FixPlan

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
    """Key rules add the user's own key names to the pre-filter."""

    @classmethod
    def trigger_groups(cls, config: Config) -> tuple[tuple[str, ...], ...]:
        extra = tuple(n.lower() for n in (*config.key_names, *config.key_headers))
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
        "(tenacity, backoff, stamina, retrying, retry), tenacity's `Retrying` iterator, and task-queue tasks that "
        "are retried (Celery `autoretry_for`/`self.retry()`, Dramatiq actors, Huey `retries=`). A helper of the "
        "same module that generates the key and is called on every attempt is reported at that call."
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
        "A key generated inside the loop only when none exists yet (`if key is None: key = uuid4()`) is reused "
        "and still reported. Keys that travel through other modules, class attributes or containers built "
        "elsewhere are not followed."
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
                if fresh is not None and context.kind == "recursive" and _defaults_a_parameter(model, call):
                    continue  # `key = key or uuid4()`: made once, then passed down to every retry
                if fresh is not None:
                    reported.add(call)
                    yield Report(
                        call,
                        f"{fresh} runs on every attempt of the {context.label} on line $context, "
                        f"so {sink.where} is a new key on each retry",
                        suggestion=None if context.kind in ("loop", "iterator") else _DECORATOR_HINT,
                        fix=hoist_out_of_loop(ctx, call, sink.value, context),
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
            fix = pass_key_to_helper(ctx, call, callee.function, chain[0].node, context)
        return Report(
            call,
            f"{callee.name}() makes a new idempotency key ({chain[-1].text} {origin}{via(chain)}) and is called on "
            f"every attempt of the {context.label} on line $context",
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


def hoist_out_of_loop(
    ctx: FileContext, call: cst.Call, sink_value: cst.BaseExpression, context: RetryContext
) -> FixPlan | None:
    """Move the key's generation to just before the retry loop, only when that is provably
    the same computation done once: a loop (not a decorator or task), nothing between the
    key and the loop runs it per item (an inner loop, a comprehension, a lambda), and the
    moved expression is made only of key-making calls (`uuid4()`, `str()`, `.hex`...) and
    names the loop does not bind. Exactly the key expression moves, never the statement
    that sends it: `key = str(uuid4())` moves as it is, a key made inline in the call gets
    its own `idempotency_key` variable and the call stays where it was."""
    import libcst as cst

    from idemlint.rule import FixPlan, NodeEdit

    if context.kind not in ("loop", "iterator"):
        return None
    model, loop = ctx.model, context.node
    if _repeats_between(model, call, loop):
        return None
    scope = model.scope_of(loop)
    bound_in_loop = {
        name
        for name, bindings in model.bindings.get(scope, {}).items()
        for b in bindings
        if model.is_inside(b.statement, loop)
    }
    statement = model.statement_of(call)
    line = model.parents.get(statement)
    if (
        isinstance(statement, cst.Assign)
        and not model.is_inside(sink_value, statement)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0].target, cst.Name)
        and isinstance(line, cst.SimpleStatementLine)
        and len(line.body) == 1
        and _runs_on_every_pass(model, line, loop)
    ):
        name = statement.targets[0].target.value
        if (
            not _is_key_expression(model, statement.value, bound_in_loop)
            or len(model.bindings_of(scope, name)) != 1
            or _read_before(loop, name, statement)
        ):
            return None
        code = ctx.module.code_for_node(line.with_changes(leading_lines=()))
        return FixPlan(
            (NodeEdit("delete_line", line), NodeEdit("insert_before", loop, code)),
            safe=True,
            description=f"generate {name} once, before the retry loop",
        )
    if model.is_inside(call, sink_value) and _is_key_expression(model, sink_value, bound_in_loop):
        name = "idempotency_key"
        if _mentions(scope, name):
            return None
        code = f"{name} = {ctx.module.code_for_node(sink_value)}\n"
        return FixPlan(
            (NodeEdit("replace", sink_value, name), NodeEdit("insert_before", loop, code)),
            safe=True,
            description=f"generate {name} once, before the retry loop",
        )
    return None


# Calls that only turn a key into text: moving them with the key changes nothing but when they run.
_KEY_FORMATTERS = frozenset({"str", "repr", "format", "hex"})
_KEY_METHODS = frozenset({"hex", "upper", "lower", "replace", "format", "strip", "encode", "decode", "zfill"})
_KEY_ATTRIBUTES = frozenset({"hex", "int", "urn", "bytes"})


def _is_key_expression(model: ModuleModel, expr: cst.BaseExpression, bound_in_loop: set[str]) -> bool:
    """Whether `expr` is made only of fresh-value calls, text formatting, literals and names
    the loop does not bind: evaluating it once before the loop has no other effect."""
    import libcst as cst

    from idemlint.analysis.model import iter_nodes

    call_funcs = set()
    for node in (expr, *iter_nodes(expr)):
        if isinstance(node, cst.Call):
            name = model.call_name(node)
            method = node.func.attr.value if isinstance(node.func, cst.Attribute) else None
            if fresh_value_name(model, node) is None and name not in _KEY_FORMATTERS and method not in _KEY_METHODS:
                return False
            call_funcs.add(node.func)
        elif isinstance(node, cst.Name):
            if node.value in bound_in_loop:
                return False
        elif isinstance(node, cst.Attribute):
            parent = model.parents.get(node)
            inside_callee = any(model.is_inside(node, f) for f in call_funcs) or (
                isinstance(parent, cst.Call) and parent.func is node
            )
            if not inside_callee and node.attr.value not in _KEY_ATTRIBUTES:
                return False
        elif isinstance(
            node,
            (
                cst.Subscript,
                cst.Await,
                cst.Yield,
                cst.NamedExpr,
                cst.Lambda,
                cst.ListComp,
                cst.SetComp,
                cst.DictComp,
                cst.GeneratorExp,
            ),
        ):
            return False
    return True


def _repeats_between(model: ModuleModel, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """Whether something between `node` and the retry loop runs it more than once per
    attempt (an inner loop over items, a comprehension) or at another time (a lambda, a def)."""
    import libcst as cst

    repeating = (
        cst.For,
        cst.While,
        cst.ListComp,
        cst.SetComp,
        cst.DictComp,
        cst.GeneratorExp,
        cst.Lambda,
        cst.FunctionDef,
        cst.ClassDef,
    )
    for ancestor in model.ancestors(node):
        if ancestor is loop:
            return False
        if isinstance(ancestor, repeating):
            return True
    return True


def _runs_on_every_pass(model: ModuleModel, line: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """The statement sits in the loop's body, directly or in a `try` or `with` body, so it
    runs unconditionally at the start of its block on every pass (not under an `if`)."""
    import libcst as cst

    for ancestor in model.ancestors(line):
        if ancestor is loop:
            return True
        if isinstance(ancestor, (cst.IndentedBlock, cst.Try, cst.With)):
            continue
        return False
    return False


def _read_before(loop: cst.CSTNode, name: str, statement: cst.CSTNode) -> bool:
    """`name` is mentioned in the loop before its assignment (in source order)."""
    import libcst as cst

    from idemlint.analysis.model import iter_nodes

    for node in iter_nodes(loop):
        if node is statement:
            return False
        if type(node) is cst.Name and node.value == name:
            return True
    return False


def _mentions(scope: cst.CSTNode, name: str) -> bool:
    import libcst as cst

    from idemlint.analysis.model import iter_nodes

    return any(type(n) is cst.Name and n.value == name for n in iter_nodes(scope, stop_at_functions=False))


def pass_key_to_helper(
    ctx: FileContext, call: cst.Call, helper: cst.FunctionDef, origin: cst.CSTNode, context: RetryContext
) -> FixPlan | None:
    """Unsafe: the helper gains `idempotency_key=None` and uses it when given; the caller
    makes the key once, before the loop, and passes it. Only for a plain helper of this
    module that makes the key itself, from nothing local to it."""
    import libcst as cst

    from idemlint.analysis.model import iter_nodes
    from idemlint.rule import FixPlan, NodeEdit

    model, module = ctx.model, ctx.module
    params = helper.params
    if context.kind not in ("loop", "iterator") or not model.is_inside(origin, helper):
        return None
    if (
        params.star_arg is not cst.MaybeSentinel.DEFAULT
        or params.kwonly_params
        or params.star_kwarg
        or params.posonly_params
    ):
        return None
    if any(p.name.value == "idempotency_key" for p in params.params) or any(a.star for a in call.args):
        return None
    helper_names = set(model.bindings.get(helper, {}))
    if any(type(n) is cst.Name and n.value in helper_names for n in (origin, *iter_nodes(origin))):
        return None
    if model.bindings_of(model.scope_of(call), "idempotency_key"):
        return None
    name = cst.Name("idempotency_key")
    tight = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))
    new_params = params.with_changes(params=[*params.params, cst.Param(name, default=cst.Name("None"), equal=tight)])
    new_call = call.with_changes(args=[*call.args, cst.Arg(name, keyword=name, equal=tight)])
    code = module.code_for_node(origin)
    guarded = f"idempotency_key or {code}"
    return FixPlan(
        (
            NodeEdit("replace", params, module.code_for_node(new_params)),
            NodeEdit("replace", origin, guarded if isinstance(model.parents.get(origin), cst.Arg) else f"({guarded})"),
            NodeEdit("replace", call, module.code_for_node(new_call)),
            NodeEdit("insert_before", context.node, f"idempotency_key = {code}\n"),
        ),
        safe=False,
        description=f"make the key once before the loop and pass it to {helper.name.value}()",
    )


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
        "redelivery of the operation reads the clock again."
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
        "over `json.dumps(...)`/`repr(...)` of them, or over variables named like request content. Digests of "
        'stable business identifiers (`sha256(order_id)`, `uuid5(NS, f"refund-{refund.id}")`) are not reported.'
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
