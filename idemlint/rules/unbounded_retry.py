"""IDM203: a retry policy with no bound, read from the same `Policy` record as the rest of the
family (`retry_policy.py` says how the three rules share it)."""

from __future__ import annotations

from idemlint.analysis.policy import Policy, Verdict
from idemlint.knowledge.retries import BACKOFF, CELERY, CELERY_CALL, RECURSION, STAMINA, TENACITY, URLLIB3
from idemlint.knowledge.triggers import RETRY
from idemlint.rules.policy_rule import PolicyRule


class UnboundedRetry(PolicyRule):
    code = "IDM203"
    stakes = "none"
    name = "unbounded-retry"
    summary = "A retry policy has no attempt limit and no deadline."
    what_it_does = (
        "Flags retry contexts with no attempt limit and no deadline: a `while True:` (or flag-driven `while`) retry "
        "loop with no counter or clock check that ends it, `itertools.count()` attempts, tenacity `@retry` without "
        "`stop=` (or with `stop_never`), backoff without `max_tries`/`max_time`, `retrying` without a stop, the `retry` "
        "package's default `tries=-1`, stamina with `attempts=None, timeout=None`, Celery `max_retries=None`, and "
        "urllib3 `Retry(total=None)` with no other counts. A retry loop's `while r.status_code >= 500:` alone bounds "
        "nothing; a count spent on every way round bounds it from any part of an `and` in the loop's test (`while "
        "not r.ok and retries:` with `retries -= 1`). A loop bounded by an `if` in its body is bounded only if every way round passes it: a `continue` "
        "ahead of the attempt check (`if status == 429: sleep(); continue`, then `if attempts >= limit: raise`) retries "
        "forever. A helper given the loop's counter (`if not should_retry(status, attempts): raise`), or the error and "
        "a deadline (`on_error(exc, deadline)`, also re-raising with a bare `raise`; not a deadline the loop moves), or "
        "the count alone where the helper raises once that parameter says so (`_check_attempts(attempt, limit)` with "
        "`if attempt > limit: raise`, outside a `try` of its own, in a call that runs whenever the handler does), "
        "owns the bound, as does a test in a loop nested in the retry that raises or returns outside a `try` that "
        "may catch it (also by calling a function that always raises: `if tries >= MAX: give_up()`), and the only test sending the loop round if it "
        "reads a count (`if policy.should_retry(attempt=n): continue`), and a deadline context (`async with "
        "asyncio.timeout(t):`); a wait through a helper of the module (`def pause(ms): time.sleep(ms / 1000)`) is a "
        "wait. A policy that goes round only on a lost race (a write conflict, a stale version, a serialization "
        "failure, a deadlock: `retry_if_exception_type(SerializationFailure)`, or a predicate here or in another module "
        "that tests `isinstance(exc, WriteConflictError)`) is not reported: each such error means another writer "
        "committed, so the retries end. A poll is not a retry context and is not reported: a loop or a retry decorator "
        'that goes round on a successful "not yet" (`while True: job = client.get_job(id); if job["status"] in DONE: break; '
        "sleep(2)`, `@backoff.on_predicate(backoff.expo, lambda state: state != 'green')` on a read) re-reads an answer and repeats no work, as does a round whose every call reads by its name and that goes round only when its lookup finds nothing yet (`except RecordNotFound: sleep(1)`, `DoesNotExist`, `NoResultFound`) or a decorator testing the function's own yes or no by a predicate named elsewhere (`retry_if_result(plugin.is_false)` around such a function whose every answer is a yes or no) (the catalogue: polling loops are not retry contexts; on "
        "repositories never run before, 22 of 23 unbounded polls judged were not bugs), nor is a loop that goes round after its work succeeded too (a periodic task: `await flush(); continue`), or that counts and waits but that no success leaves (a feed refreshed until it is stopped; a `return` only in a handler leaves on a failure; `while ok and ...` goes round while it works; `while status != 200 and tries < 5:` leaves by its test once the work goes through, a retry). A loop read as a poll that "
        "also re-sends work (a batch sent again until every item is delivered) is missed with it. Not reported in a "
        "program a person runs (a script, a management command, a file with a `__main__` block or a loop at module "
        "level): one client someone watches, with no herd or fleet behind it. A `__main__.py`, or a file with a `__main__` block, that runs until it is stopped (`loop.run_forever()`, `serve_forever()`) is a service and is judged (a script by its folder stays one), as is an example module. "
        "Nor is a failover that keeps the candidates it tried and tests them (`if url in tried: break`), nor a loop that "
        "follows what each failure names (`except Moved as m: url = m.location`), nor a consumer whose `try` only waits to "
        "take the next message for a time it was given and sends nothing (`msg = await subs[ch].get_message(timeout=1.0)`, "
        "subscribing again when the wait fails). Nor is a wait "
        "again, given a time, for work made before the loop (`while True: try: return future.result(timeout=60)`, "
        "`thread.join(5)`, `as_completed(fs, timeout=60)`): nothing is re-attempted; a future submitted in the same "
        "round is the work sent again. Nor is a supervisor, by any retry rule: a retry around a service loop, on a thread's `run()` starting a service "
        "(`stream.start()`), or on a function looping until stopped (`while not stop.is_set():`), or a loop stopped from outside whose work is handed that very flag (`while not exit_event.is_set(): try: serve(exit_event)`, a callable the function was handed or one named for serving; not a write, nor a call named for an act such as `gateway.settle(invoice, stop)`): it restarts the service. Nor, by any retry rule, is a "
        "decorator of tenacity, backoff, retrying or retry applied directly to a generator function (`yield` in its "
        "body, `async def` too; also `tenacity.retry(...)(stream)`): the call hands back the generator before any of "
        "its code runs, so nothing it does is attempted again (stamina's re-runs it and is judged; so is one with a "
        "decorator between that runs the generator through, `@collecting`). A policy bound to a name is judged where "
        "it is written, whatever it is applied to. A wait that ended with nothing is not a failed attempt: a lock not "
        "free in time (`except LockTimeout:`), a consumer's empty poll window (`except ConsumerTimeout:`), a bare "
        "`TimeoutError` from a take given a time (`drain_events(timeout=...)`, `recv` after `settimeout`, also on a socket "
        "handed to the read, `recv(sock, n)`, or a read inside `asyncio.wait_for(..., timeout)`; a socket's own read, "
        "`self.sock.recv(n)`, in a round that sends nothing, times out only where its socket was given a time), a producer's "
        "full local queue (`except BufferError:`): a loop that goes round only on these waits, as a blocking take "
        "would. A Redis WATCH/MULTI loop that goes round on `WatchError` goes round on a lost race. A loop whose every "
        "pass ends by leaving (the handler falls through to a `raise`) runs once, whatever its header says, and a `while "
        "should_retry:` loop whose pass clears its flag before the attempt ends on a failure its handler only logs. A `continue` "
        "held in a `with` block (`async with session.get(url) as r: if r.status == 429 and retries: retries -= 1; "
        "continue`) is bounded by the count it spends, and a test named for a limit reached (`if "
        "self._retry_limit_reached(): break`) by the helper that owns it. A loop that sends a write (`http_client.post"
        "(...)`) talks to another system even when it neither sleeps nor names a network error."
    )
    why = (
        "An unbounded retry turns a permanent failure into an endless loop: the caller never hears about it, queues "
        "back up, and every attempt may repeat a side effect. A bound (attempts and total time) turns it into a visible "
        "failure that a human or a reconciliation job can act on."
    )
    fix_hint = "Bound both the attempts and the total time, then surface the failure (raise, dead-letter, alert)."
    bad = """\
import time
import random
import requests

def publish(event):
    while True:
        try:
            return requests.put(f"https://bus.example/events/{event.id}", json=event.body, timeout=5)
        except requests.ConnectionError:
            time.sleep(random.uniform(0, 5))
"""
    good = """\
import time
import random
import requests

def publish(event):
    for attempt in range(8):
        try:
            return requests.put(f"https://bus.example/events/{event.id}", json=event.body, timeout=5)
        except requests.ConnectionError:
            time.sleep(random.uniform(0, min(60, 2 ** attempt)))
    raise RuntimeError(f"event {event.id} not published after 8 attempts")
"""
    how_to_fix = (
        ("hand-written loop", "`for attempt in range(n):`, then `raise` after the loop; or a monotonic deadline."),
        (TENACITY, "`stop=stop_after_attempt(5) | stop_after_delay(60)`."),
        (BACKOFF, "`max_tries=5` and/or `max_time=60`."),
        ("Celery", "`max_retries=5` (the default is 3); dead-letter the task afterwards."),
        ("recursion", "Pass an attempt counter and step it (`get_token(..., retries=retries - 1)`), raising at zero."),
    )
    fix_safety = "No automatic fix: only the author knows the right bound. The suggestion names the parameter to add."
    triggers = (RETRY,)

    messages = {
        ("no-bound", TENACITY): "{label} has no stop=, so it retries forever",
        ("stop-never", TENACITY): "{label} uses stop_never",
        ("no-bound", "retrying"): "{label} has no stop_max_attempt_number or stop_max_delay, so it retries forever",
        ("no-bound", BACKOFF): "{label} has neither max_tries nor max_time, so it retries forever",
        ("no-bound", STAMINA): "{label} sets attempts=None and timeout=None",
        ("no-bound", "retry"): "{label} has no tries= bound (the default -1 retries forever)",
        ("no-bound", "loop"): "the retry loop has no attempt limit and no deadline",
        ("bypassed-bound", "loop"): (
            "the retry loop goes round at the `continue` on line $skip without reaching its bound on line $bound"
        ),
        ("endless-count", "loop"): "the retry loop counts attempts with itertools.count() and never stops",
        ("no-bound", RECURSION): (
            "the recursive retry calls itself again with the arguments it was given and counts no attempts, "
            "so only the recursion limit ends it"
        ),
        ("no-bound", CELERY): "the Celery task retries forever (max_retries=None)",
        ("no-bound", CELERY_CALL): "{owner}.retry(max_retries=None) retries forever",
        ("no-bound", URLLIB3): "Retry(total=None) sets no bound on retries",
    }

    def verdicts(self, policy: Policy) -> list[Verdict]:
        return policy.unbounded
