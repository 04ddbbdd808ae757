"""Family 2xx: retry policies that retry the unretryable, in lockstep, or forever. The three rules
share one record: `idemlint.analysis.policy` reads every retry policy in a file (by library: `loops`,
`tenacity`, `backoff`, `celery`, `urllib3`) into a `Policy` whose verdicts carry a kind, a source and
the facts a message needs. Each rule (IDM201 and IDM202 here, IDM203 in `unbounded_retry.py`) picks
its verdicts and words them: its `messages` table, keyed by (kind, source), is every text it reports
(`policy_rule.PolicyRule`)."""

from __future__ import annotations

from idemlint.analysis.policy import Policy, Verdict
from idemlint.knowledge.retries import (
    BACKOFF,
    CELERY,
    CELERY_CALL,
    HUEY,
    RECURSION,
    REQUEUE,
    STAMINA,
    TENACITY,
    URLLIB3,
)
from idemlint.knowledge.triggers import RETRY
from idemlint.rules.policy_rule import PolicyRule


class RetryNonRetryable(PolicyRule):
    code = "IDM201"
    stakes = "none"  # retrying what cannot succeed costs load; more when the operation has an effect
    stakes_follow_effects = True
    name = "retry-non-retryable"
    summary = "A retry policy retries every exception, or HTTP statuses that a retry cannot fix."
    what_it_does = (
        "Flags retry policies that retry errors a retry cannot fix: a hand-written retry loop whose `except:` / `except "
        "Exception` handler goes round again (a retry loop leaves once its work goes through, by a `return` or "
        "`break` outside its handlers or by its own test, `while status != 200 and tries < 5:`; one that no success "
        "leaves, a feed refreshed until it is stopped, runs on a schedule and no retry rule judges it); tenacity `@retry` (also `api_retry = retry(...)` bound for other modules, "
        "judged where written) with no `retry=` condition or with "
        "`retry_if_exception_type(Exception)`, or every exception but a few (`retry_if_not_exception_type(NotFound)`, "
        "`retry_if_exception(lambda e: not isinstance(e, NotFound))`); `backoff.on_exception(..., Exception)` without "
        "`giveup=`; `stamina.retry(on=Exception)`; `retrying`/`retry` decorators with no exception filter; Celery "
        "`autoretry_for=(Exception,)` or `except Exception: raise self.retry(...)`; a Huey task with `retries=` above zero "
        "(Huey retries every exception the task lets out, unless its body catches and returns on everything it "
        "does not mean to retry: `except Exception: return`; nor a Celery task whose own body ends every failure, a `try` "
        "with a catch-all handler that logs and returns around all but its imports (an import counts as unable to "
        "fail): its `autoretry_for` never fires, nor, by any retry rule, a retry decorator that goes round on errors "
        "only around such a function); and status lists that retry HTTP "
        "400, 401, 403, 404, 405, 410 or 422 (`status_forcelist`, `retry_if_result`, `if resp.status_code in (...)` in "
        "a retry loop; not a branch that waits for the header saying when to come back, `X-RateLimit-Reset` or "
        "`Retry-After`: GitHub's 403 is a throttle; nor a 401 or 407 after the branch renews the credentials, by a call named for it, `refresh_token()`, or told to by a flag, `prepare(params, reauth=True)`), and a loop that sends a write and leaves only on a success (`if "
        "r.status_code == 200: break`, then round again after a 400 or a 401 too), and a loop or recursive retry "
        "whose handler catches the status error (`httpx.HTTPStatusError`, `requests.HTTPError`, by name or through a "
        "tuple once; not a base: `requests.RequestException`) raised by `raise_for_status()` in its `try` (`urlopen()` "
        "raises `urllib.error.HTTPError` itself for 400 and up), without looking at the status, and a Celery task's "
        "handler of one that calls `self.retry()`. (urllib3 `Retry(allowed_methods=...)` with POST or PATCH retries a "
        "side effect, not an error: IDM301 reports it.) A Celery Task class declaring `autoretry_for` "
        "(used as `base=` by tasks here or in other modules) is judged where its settings are written, once for every "
        "task that inherits them. A task's own `autoretry_for=(HTTPError,)` is reported where a status error may reach "
        "it: `raise_for_status()` or `raise HTTPError(...)` in the task or in a project function it calls or hands on, "
        "with no handler on the way that ends it, or a call into a project module idemlint has no summary of; without a "
        "project index it always is. A catch-all handler that gives up on a test of what it caught, directly or through "
        "a value taken from it (`status = status_of(err)`, then `if not should_retry(status): raise`), or hands it to a "
        "project function that may raise (`on_error(exc, deadline)`; a loop's or a recursive retry's), classifies the "
        "failure and is not reported; nor is one after which the same pass goes on to more work (`try: old.close() except Exception: log(...)`, then a "
        "new connection is opened): it guards a step of the attempt, not the attempt; nor one in a `while should_retry:` "
        "loop whose pass clears the flag before its attempt: the failure ends the loop. Not reported in a program a "
        "person runs (a script, a management command, a file with a `__main__` block or a loop at module level): one "
        "client someone watches, with no herd or fleet behind it. A `__main__.py`, or a file with a `__main__` block, that runs until it is stopped (`loop.run_forever()`, `serve_forever()`: a `python -m bot` service) is a service and is judged (a script by its folder, `scripts/`, `bin/`, stays one); an example module, which users copy into their services, "
        "is judged."
    )
    why = (
        "Retrying a bug, a rejected card, a validation error or an expired credential never succeeds; it multiplies "
        "load, delays the real error, and re-sends side effects that may already have happened (a timeout, the one "
        "error that hides a success, is caught by the same broad net)."
    )
    fix_hint = "Retry an explicit table of transient errors (connection errors, 408, 425, 429, 5xx; timeouts only where the call is idempotent or carries a key) and let everything else fail fast."
    extra_docs = """\
### Retry decision table

| error | retry? |
| --- | --- |
| connection refused / reset before the request was sent | yes |
| HTTP 408, 425, 429 (honour `Retry-After`), 500, 502, 503, 504 | yes, with backoff and jitter |
| timeout (read timeout, `TimeoutError`) | only if the endpoint is idempotent or the request carries an idempotency key |
| HTTP 400, 405, 410, 422 (malformed or rejected request) | never: fix the request |
| HTTP 401, 403 (authentication, authorisation) | never: refresh credentials first, then it is a new request |
| HTTP 404 | never (unless you are polling for something being created: that is a poll, not a retry) |
| `Exception` / bare `except:` | never as a class: list the transient ones |
"""
    known_problems = (
        "A handler that catches `Exception` but inspects it (`if not is_transient(e): raise`, or a Celery task's "
        "`if is_transient(exc): raise self.retry(exc=exc)`, every retry in a branch of such a test) is not "
        "reported; one that leaves one kind out and retries the rest (`if isinstance(exc, KeyError): return`, then "
        "`raise self.retry(...)`) is. A loop that reads (`GET`) and leaves on `if resp.ok: return` is not reported: it may wait for a 404 to turn into a 200."
    )
    bad = """\
import requests
from tenacity import retry, stop_after_attempt, wait_random_exponential

@retry(stop=stop_after_attempt(5), wait=wait_random_exponential(max=30))
def fetch_rates():
    return requests.get("https://fx.example/rates", timeout=5).json()
"""
    good = """\
import requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

@retry(retry=retry_if_exception_type((requests.ConnectionError, requests.Timeout)),
       stop=stop_after_attempt(5), wait=wait_random_exponential(max=30))
def fetch_rates():
    return requests.get("https://fx.example/rates", timeout=5).json()
"""
    how_to_fix = (
        (
            "hand-written loop",
            "`except (requests.ConnectionError, requests.Timeout):` instead of `except Exception:`; let 4xx responses raise.",
        ),
        (
            TENACITY,
            "`retry=retry_if_exception_type((ConnectionError, TimeoutError))`, or `retry_if_result(lambda r: r.status_code in (429, 502, 503, 504))`.",
        ),
        (
            BACKOFF,
            "`@backoff.on_exception(backoff.expo, requests.ConnectionError, giveup=lambda e: e.response is not None and e.response.status_code < 500)`.",
        ),
        ("stamina", "`@stamina.retry(on=httpx.TransportError)` or a predicate that checks the status."),
        (
            "urllib3 / requests",
            "`Retry(status_forcelist=(429, 500, 502, 503, 504), allowed_methods=Retry.DEFAULT_ALLOWED_METHODS)`.",
        ),
        ("Celery", "`autoretry_for=(ConnectionError, TimeoutError)` and raise the rest."),
    )
    triggers = (RETRY,)

    messages = {
        # retries every exception (policy.catches_all)
        ("no-filter", TENACITY): "{label} has no retry= condition, so it retries every exception",
        ("no-filter", "retrying"): "{label} has no retry_on_exception, so it retries every exception",
        ("no-filter", "retry"): "{label} retries every exception",
        ("catch-all", TENACITY): "{label} retries every exception (Exception)",
        ("catch-all-default", TENACITY): (
            "{label} retries every exception (retry_if_exception_type() defaults to Exception)"
        ),
        ("catch-all-rest", TENACITY): "{label} retries every exception but {owner}",
        ("catch-all", BACKOFF): "{label} retries every exception",
        ("catch-all", STAMINA): "{label} retries every exception (on=Exception)",
        ("catch-all", "retry"): "{label} retries every exception",
        ("catch-all", CELERY): "the Celery task retries every exception (autoretry_for=(Exception,))",
        ("catch-all", HUEY): (
            "the Huey task retries every exception it lets out (retries=...; Huey takes no list of what to retry)"
        ),
        ("catch-all-handler", CELERY): "the Celery task retries every exception (except Exception -> self.retry)",
        ("catch-all-handler", "loop"): (
            "the retry loop on line $context retries every exception{caught}, including errors a retry cannot fix"
        ),
        ("catch-all-handler", RECURSION): (
            "the handler that calls the function again (the recursive retry on line $context) catches every "
            "exception{caught}, including errors a retry cannot fix"
        ),
        ("catch-all-rest", RECURSION): (
            "the handler that calls the function again (the recursive retry on line $context) re-raises {owner} but "
            "catches every other exception{caught}, including errors a retry cannot fix"
        ),
        ("catch-all-rest", "loop"): (
            "the retry loop on line $context re-raises {owner} but retries every other exception{caught}, "
            "including errors a retry cannot fix"
        ),
        # retries what a retry cannot fix (policy.non_retryable_statuses)
        ("non-retryable-status", TENACITY): "{label} retries on HTTP {codes}, which a retry cannot fix",
        ("non-retryable-status", BACKOFF): "{label} retries on HTTP {codes}, which a retry cannot fix",
        ("non-retryable-status", "loop"): (
            "the retry loop on line $context retries on HTTP {codes}, which a retry cannot fix"
        ),
        ("every-failure-status", "loop"): (
            "the retry loop on line $context leaves only on a success: it sends again after every other answer, 4xx "
            "included, which a retry cannot fix"
        ),
        ("non-retryable-status", URLLIB3): "Retry(status_forcelist=...) retries HTTP {codes}, which a retry cannot fix",
        ("status-error-class", "loop"): (
            "the retry loop on line $context retries the status error{caught} that {raiser} raises for a 4xx too, "
            "which a retry cannot fix"
        ),
        ("status-error-class", RECURSION): (
            "the handler that calls the function again (the recursive retry on line $context) catches the status "
            "error{caught} that {raiser} raises for a 4xx too, which a retry cannot fix"
        ),
        ("status-error-class", CELERY): "the Celery task retries HTTPError, which {raiser} raises for 4xx too",
        ("status-error-class", CELERY_CALL): (
            "the Celery task's handler retries the status error{caught} that {raiser} raises for a 4xx too, "
            "which a retry cannot fix"
        ),
        ("unsafe-methods", URLLIB3): "Retry(allowed_methods=...) retries {methods}: a non-idempotent request retried "
        "without a key can act twice",
    }

    def verdicts(self, policy: Policy) -> list[Verdict]:
        # a transport that re-sends POST retries a side effect, not an error: IDM301 reports it
        return policy.catches_all + [v for v in policy.non_retryable_statuses if v.kind != "unsafe-methods"]


class RetryWithoutJitter(PolicyRule):
    code = "IDM202"
    stakes = "none"
    herd_harm = True
    confidence = "medium"
    name = "retry-without-jitter"
    summary = "The wait between retry attempts has no random component."
    severity = "warning"
    what_it_does = (
        "Flags waits between attempts that have no random part: a constant or computed `time.sleep` / `asyncio.sleep` in a retry loop (`sleep(1)`, `sleep(2 ** attempt)`), tenacity `wait_fixed` / `wait_exponential` / "
        "`wait_incrementing` without a `wait_random*` or `wait_exponential_jitter` part (or no `wait=` at all), `backoff` with `jitter=None`, `stamina` with `wait_jitter=0`, urllib3 `Retry(backoff_factor=...)` without "
        "`backoff_jitter` (also through `**retry_args`, a dict written once, and for a project's own subclass of `Retry` in any module, through the project index), a project's own retry policy built with a wait but without its jitter where the constructor's jitter defaults to none (`HttpxRetry(backoff_factor=0.5)` "
        "for `def __init__(self, ..., backoff_jitter=0)`), Celery `self.retry(countdown=...)` computed without randomness, or a `self.retry()` that passes no `countdown=` after a failure (it waits the task's fixed "
        "`default_retry_delay`, 180 s unless set: `retry_backoff` shapes only `autoretry_for`'s retries), `default_retry_delay` "
        "with no backoff (not where every `self.retry()` polls: `if action.status != 'done': self.retry()`), an `autoretry_for` task without `retry_backoff` (its retries wait the fixed "
        "`countdown` of `retry_kwargs`, else the `default_retry_delay`; not where the task also retries by hand, nor "
        "with a `base=` class from another module), `retry_jitter=False`, a Huey task's nonzero `retry_delay` (Huey adds no random part), and failed work put back on its queue "
        "after a wait built only from its settings (a runner that counts the attempt, `task.retries -= 1`, sets "
        "`task.eta = now + timedelta(seconds=task.retry_delay)` and queues the task again). A hand-written retry loop "
        "or recursive retry that goes round again at once, with no wait at all, after a network failure (`except "
        "requests.ConnectionError: continue`, `if n < tries: continue` then `raise`, a catch-all around a call on a "
        "client, session or connection; the caught tuple may be held in a name) is reported at that handler, unless it "
        "makes at most two attempts, does something about the failure first (reconnects, refreshes a token), retries "
        "a lost race, or catches only the errors of a database kept in a file on this machine (`sqlite3.OperationalError`) "
        "(measured apart: `medium` until judged). Polling, consumer loops (a `try` that only waits to take the next message for a time it was given, "
        "`get_message(timeout=1.0)`, and sends nothing) and per-item pacing are not retry "
        "contexts and are not reported; so is a retry decorator on a function that only reads and raises while a value "
        'it read says "not yet" (`if order["status"] != "issued": raise ...`, a `match job.status:` case that raises (not a '
        "match on a status code), or `if alive: return True` just before "
        "the body's last statement, `raise NotYet(...)`, with no handler that does not raise), or that goes round on its "
        "answer (`retry_on_result=lambda gone: gone is False`, `retry_if_result(lambda r: r is None)`, or a function of the module whose body is such a `return`, also `| "
        "retry_if_exception_type(...)` riding out a failed read that no handler of its own turns into an answer, "
        "`on_predicate`) where neither that test nor the function's own tests name a failure (a status code, `ok`, an "
        "error), or on every answer until the call fails (`retry_unless_exception_type(AgentGone)` around a function "
        "that answers nothing and only looks up, by the names of its calls: `get_commands_status(node)`): a poll "
        "(IDM203 does not judge it either), nor a loop that goes round while the answer it read is not yet over (`if not "
        "rows or not is_complete: sleep(...); continue`; not `not ok`, `not succeeded`, which deny an outcome; an "
        "`execute` of a `SELECT` is a read, also one kept as a class constant or wrapped in a statement object "
        "(`self._execute(SimpleStatement(self._SELECT_SESSION))`, whatever the helper sends it with), and so is a sender told to `GET`), "
        "nor a loop whose handler rebinds an input of the work from the error it caught (`except Moved as m: url = "
        'm.location`, `transaction["data"] = resolve(lookup.payload)`): it follows a redirect the answer named, nor a `while` loop that only reads and whose own test reads again what its '
        "round fetched (`while server.status != wanted and retry:` round `server = api.get(id)`), nor a loop that only "
        "reads whose inner loop over the answer returns once it shows what is awaited (`for vol in volumes: if "
        'vol["name"] == name: return True`; a count the loop steps, `for retry in range(4)` or `n = n + 1`, is no '
        "answer), nor a loop whose "
        "`try` looks for an item in a listing and waits when an `IndexError` or `StopIteration` says it is not there "
        "yet (`[n for n in nodes if n.id == new_id][0]`), or that goes round only on a not-found error (`except RecordNotFound:`, `DoesNotExist`, `NoResultFound`, `NoSuchKey`: the record another worker makes is not there yet) in a round whose every call reads by its name (`get_route`, `share_instance_get`; not `place_order`), nor a decorator that names its predicate (tenacity's `retry_if_result(plugin.is_false)`, retrying's `retry_on_result=is_false`) around a function whose every answer is a yes or no (`True`, `False`, `None`, a comparison, `all(...)`) and whose every call reads by its name (no write, no name of a change such as `increment_view_count`), nor a failover that keeps the candidates it tried and tests them (`if url "
        "in tried: break`; `tried.add(url)`; `try: connect(url)`): each round tries another node, and no rule of this "
        "family judges it, nor a probe that waits against a deadline (every request a GET whose answer is thrown away, `with urlopen(url): return`, in `while time.monotonic() < deadline:` or followed by `raise TimeoutError`), nor a loop that goes round after a success too (`await flush(); continue`: a schedule), nor one that counts and waits but that no success leaves (a feed refreshed until it is stopped; a `return` only in a handler, `except Unsupported: return`, leaves on a failure). Nor is a wait in a handler whose `try` only takes a local file or lock (`fcntl.lockf(...)`, "
        "`open(path)`), or that catches only `FileExistsError` or `BlockingIOError` (a lock file held), or leaves unless the error says a local address is taken (`if err.errno != errno.EADDRINUSE: raise`), or catches only a local database file's errors (`sqlite3.OperationalError`: 'database is locked'), or only connects to a loopback address (`asyncio.open_connection('127.0.0.1', port)`: a service this machine started), and sends no request in the same round: no herd; nor in a handler catching only another writer's conflict (`IntegrityError`, "
        "`X.DoesNotExist`, a lost race), nor one in a `try`'s body after the round's read and a test of what it "
        "gave that leaves the loop (`stack = heat.get(id)`; `if stack.status == wanted: return stack`; `sleep(5)`): "
        "the poll's pace, not a backoff after a failure (a test of a status code, `ok` or an error on the way keeps "
        "it one); nor, anywhere in the round outside a handler, a wait in a `while` loop whose own test awaits a state "
        'the round reads again and that sends no write (`while snapshot.status != "available":` round `snapshot = '
        "cloud.get_snapshot(id)`, a lazily made client's chain `self.get_cinder().get_snapshot(id)` included): IDM201 "
        "still reports a catch-all there. Not reported in a program a person runs (a script, a management command, a "
        "file with a `__main__` block or a loop at module level): one client someone watches, with no herd or fleet "
        "behind it. A `__main__.py`, or a file with a `__main__` block, that runs until it is stopped (`loop.run_forever()`, `serve_forever()`: a `python -m bot` service) is a service and is judged (a script by its folder, `scripts/`, `bin/`, stays one); an example module, which users copy into their services, is judged."
    )
    why = (
        "When a dependency blips, every client fails at the same moment. Without jitter they all retry at the same "
        "moments too, in synchronised waves that knock the recovering service over again (a retry storm)."
    )
    fix_hint = "Use exponential backoff with full jitter, capped (`random.uniform(0, min(cap, base * 2 ** attempt))`), and honour `Retry-After`."
    known_problems = (
        "`retrying`'s `retry_on_result=` alone also retries every exception (its default): around a function that "
        "only reads it is still taken for a poll, whose failed reads it rides out. A failover is told by the collection "
        "of tried candidates it keeps and tests, not by what the draw returns. "
        "A sleep whose delay comes from a helper function is assumed to jitter, unless the helper returns a setting as "
        "stored on every return (`def get_delay_ms(self): return self.delay_ms`), found in this module or through the "
        "project index, also for a parameter named like the project's one class of that name (`retry_config` for "
        "`RetryConfig`). A sleep reached through a module that imports the library under its own name "
        "(`compat.event_loop.sleep()`, where `compat` has `import trio as event_loop`) is the library's, when the "
        "project index is there. A delay read from `Retry-After` is the server's instruction and is not reported, nor one read from the error a handler caught (`countdown=busy.countdown`: the code that raised it chose the delay); each "
        "way the delay can be computed is judged on its own, so a fixed fallback used when the server sends no "
        "`Retry-After` (`retry_after or 2 ** attempt`, a default overridden only when the header is there) is, and no "
        "fix is offered for it (jittering the server's value could retry before it said). A wait in a loop that goes "
        'round only on `queue.Empty` (or another "nothing there yet" exception, as a `pop()` from an emptied cache '
        "raises, a lock or a consumer's wait that timed out with nothing: `LockTimeout`, `ConsumerTimeout`, or a "
        "bare `TimeoutError` from `drain_events(timeout=...)`) is a poll interval, as is one in a loop that only sends an HTTP read (`session.get(url)`) and leaves on "
        'a ready answer (`if task["status"] == "SUCCESS": return ...`), also where a failed read goes round at the same fixed interval (`except '
        "RequestException: sleep(POLL_INTERVAL); continue`); one that sends a write each round (or through a helper), or backs off with the attempt, stays a retry. A retry loop that waits by calling a helper (`sleep(500)` wrapping `time.sleep(ms "
        "/ 1000)`, a policy object's `handle_retry()`) is reported when the helper sleeps on every call for a delay "
        "with no random part, or before every `return True` of a step that answers no otherwise (`if "
        "retry.handle_retry(): continue`), in this module or (through the project index) another; a delay the caller passes counts when it is fixed (another module: a number written out). "
        'A Celery task only a periodic schedule starts (a beat entry\'s `"task": "shop.tasks.sync"` or `@periodic_task`, and no code of the project queues it: `.delay`, `.apply_async`, a signature, `send_task`) runs once per tick, so its fixed countdown is reported at `low`, measured apart.'
    )
    bad = """\
import time
import requests

def fetch_statement(url):
    for attempt in range(5):
        try:
            return requests.get(url, timeout=5)
        except requests.ConnectionError:
            time.sleep(2 ** attempt)
    raise RuntimeError("statement unavailable")
"""
    good = """\
import random
import time
import requests

def fetch_statement(url):
    for attempt in range(5):
        try:
            return requests.get(url, timeout=5)
        except requests.ConnectionError:
            time.sleep(random.uniform(0, min(30, 2 ** attempt)))
    raise RuntimeError("statement unavailable")
"""
    how_to_fix = (
        ("hand-written loop", "`time.sleep(random.uniform(0, min(cap, base * 2 ** attempt)))`."),
        (
            TENACITY,
            "`wait=wait_random_exponential(multiplier=1, max=60)`, or `wait_exponential(...) + wait_random(0, 2)`.",
        ),
        (BACKOFF, "Leave `jitter` at its default (`full_jitter`)."),
        (URLLIB3, "`Retry(backoff_factor=0.5, backoff_jitter=1.0)` (urllib3 >= 2)."),
        (
            "Celery",
            "`retry_backoff=True` (jittered by default), or `countdown=random.uniform(0, 2 ** self.request.retries)`.",
        ),
    )
    fix_safety = (
        "Unsafe fixes (they change timing): a constant `time.sleep(d)` in a retry loop becomes "
        "`time.sleep(random.uniform(0, d))` (adding `import random`), tenacity `wait_fixed(n)` gains `+ wait_random(0, "
        "n)`, `wait_exponential(...)` becomes `wait_random_exponential(...)` with the same bounds, and backoff's "
        "`jitter=None` is dropped. Applied with `--fix --unsafe-fixes`."
    )
    triggers = (RETRY,)

    messages = {
        ("no-wait", TENACITY): "{label} has no wait=, so every client retries at once, immediately",
        ("no-wait", "loop"): (
            "the retry loop on line $context goes round again at once after this failure, with no wait: every "
            "client re-sends at the same instant to a service that just failed"
        ),
        ("no-wait", RECURSION): (
            "the {label} on line $context calls the function again at once after this failure, with no wait: "
            "every client re-sends at the same instant to a service that just failed"
        ),
        ("fixed-wait", TENACITY): "{label} waits with no random component",
        ("fixed-wait", "retrying"): "{label} waits with no random component",
        ("fixed-wait", "retry"): "{label} waits with no jitter",
        ("fixed-wait", "loop"): (
            "the retry loop on line $context sleeps a fixed or computed delay with no random component"
        ),
        ("fixed-wait", RECURSION): (
            "the {label} on line $context sleeps a fixed or computed delay with no random component"
        ),
        ("fixed-wait", "helper"): (
            "{owner}() sleeps a delay with no random component ({origin}{via}) between attempts of the retry loop "
            "on line $context"
        ),
        ("fixed-wait", CELERY): "the Celery task retries after a fixed default_retry_delay with no backoff or jitter",
        ("fixed-countdown", CELERY): (
            "the Celery task's autoretry_for retries wait the fixed countdown of retry_kwargs (computed once, when the "
            "task is defined), with no backoff or jitter"
        ),
        ("default-wait", CELERY): (
            "the Celery task's autoretry_for retries wait its fixed default_retry_delay (180 s unless set), with no "
            "backoff or jitter: retry_backoff is off"
        ),
        ("fixed-wait", CELERY_CALL): "{owner}.retry() waits a countdown with no random component",
        ("fixed-wait", HUEY): "the Huey task waits its retry_delay between attempts with no random component",
        ("default-wait", CELERY_CALL): (
            "{owner}.retry() passes no countdown, so every retry waits the task's fixed default_retry_delay (180 s "
            "unless set), with no random component"
        ),
        ("default-wait-shaped", CELERY_CALL): (
            "{owner}.retry() passes no countdown, so every retry waits the task's fixed default_retry_delay (180 s "
            "unless set), with no random component: retry_backoff and retry_jitter apply only to autoretry_for"
        ),
        ("fixed-wait", REQUEUE): (
            "{owner} is put back on the queue after a wait with no random component, so work that failed together "
            "is retried together"
        ),
        ("fixed-wait", URLLIB3): "Retry(backoff_factor=...) has no backoff_jitter, so clients retry in waves",
        ("fixed-wait", "retry-class"): (
            "{owner}(...) sets a wait between attempts but leaves {setting} at its default, no jitter, so clients "
            "retry in waves"
        ),
        ("jitter-off", BACKOFF): "{label} turns jitter off (jitter=None)",
        ("jitter-off", STAMINA): "{label} turns jitter off (wait_jitter=0)",
        ("jitter-off", CELERY): "the Celery task turns jitter off (retry_jitter=False)",
    }

    def verdicts(self, policy: Policy) -> list[Verdict]:
        return policy.no_jitter
