"""What a caller inherits from a function it calls: one rule, used within a module
(`summaries.summarise`) and across the project (`project.follow_calls`).

A fact already known is never replaced, so recursion and cycles end. Where the call is tells
what passes: a fresh key only when the call's result is returned or sent as a key, a wait
or a failure record only from a call made on every call of the caller, and nothing a retry
rule judges at the call (an unkeyed effect, a fixed wait, a request whose method is passed)
from a call inside one of the caller's own retries. Adding a fact to `Summary` is its field,
its name in `CHAIN_FACTS`, and a line here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from idemlint.analysis.summary_records import Chain, Passed, Step, Summary


def _never(_slot: str) -> bool:
    return False


@dataclass(frozen=True)
class CallSite:
    """How the caller makes the call."""

    step: Step  # the call, as the chain of a fact inherited through it shows it
    passed: Passed = ()
    always: bool = False  # made on every call of the caller (not under an `if`, a loop, a handler)
    returned: bool = False  # the caller returns its result
    sent: bool = False  # the caller sends its result as an idempotency key
    retried: bool = False  # inside one of the caller's retries (the retry rules judge it there)
    fixed: Callable[[str], bool] = _never  # whether the argument in a slot is a delay with no random part
    status_errors_leave: bool = True  # no handler around the call ends an HTTP status error it raises
    duplicates_absorbed: bool = False  # a handler around it takes "exists already" as success: safe to repeat


def inherit(
    caller: Summary, callee: Summary, site: CallSite, chains: dict[str, Chain], looks_up: bool = False
) -> Summary:
    """Add to `chains` the facts this call gives the caller (the first call to give one wins)
    and return the caller's summary with the parameters those facts bind. A caller named for a
    lookup (`looks_up`: `search`, `find_similar`; `knowledge/repeats.names_a_lookup`) takes no
    side effect from its callees: what it sends is a query, a POST only for its body."""
    step, passed = site.step, site.passed

    def take(fact: str, chain: Chain | None) -> bool:
        if chain and getattr(caller, fact) is None:
            chains.setdefault(fact, (step, *chain))
            return True
        return False

    supplied, forwarded = callee.key_binding(passed)
    if not supplied and site.returned and take("returns_key", callee.returns_key):
        caller = replace(caller, key_params=caller.key_params | forwarded)
    elif not supplied and take("sends_key", callee.sends_key or (callee.returns_key if site.sent else None)):
        caller = replace(caller, key_params=caller.key_params | forwarded)  # `headers={"Idempotency-Key": make_key()}`
    unkeyed, operation = callee.unkeyed_effect_for(passed) if not looks_up else (None, "")
    # judged at the retry, or refused the second time (a 409 on a PATCH is a version clash)
    repeatable = site.retried or site.duplicates_absorbed and not operation.lower().endswith("patch")
    if not repeatable and take("unkeyed_effect", unkeyed) and not caller.effect_operation:
        caller = replace(caller, effect_operation=operation)
    take("effect", None if looks_up else callee.effect_for(passed))
    if site.always and not site.retried:
        take("waits_fixed", callee.fixed_wait_for(passed, site.fixed))
    forwarded_wait = next(
        (source for slot, source, _l in passed if source and callee.slot_name(slot) == callee.wait_param), ""
    )
    if forwarded_wait and site.always and take("wait_chain", callee.wait_chain):
        caller = replace(caller, wait_param=forwarded_wait)
    forwarded_verb = callee.verb_binding(passed)[1]
    if forwarded_verb and not repeatable and not looks_up and take("verb_effect", callee.verb_effect):
        caller = replace(caller, verb_param=forwarded_verb, verb_operation=callee.verb_operation)
    if site.always:
        take("records_failure", callee.records_failure)
    if site.returned:
        take("returns_count", callee.returns_count)
    if site.status_errors_leave:
        take("raises_status_error", callee.raises_status_error)
    if not site.duplicates_absorbed and callee.inserts_row:
        if take("inserts_row", callee.inserts_row):
            caller = replace(caller, inserted_model=callee.inserted_model)
        caller = replace(caller, inserted_models=tuple(sorted({*caller.inserted_models, *callee.inserted_models})))
    return caller
