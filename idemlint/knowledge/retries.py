"""The words of a retry: how code names the counter of its attempts."""

from __future__ import annotations

import re

# the words of an attempt counter's name: `attempt`, `retries`, `n_tries`, `retry_count`,
# `tries_left`, `attemptNumber`, `nretries`
ATTEMPT_WORDS = frozenset({"attempt", "attempts", "retry", "retries", "retrying", "retried", "tries", "tried", "try"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


# what a name run together may add to an attempt word: `maxretries`, `retrycount`, `nretries`
_AFFIXES = frozenset({"n", "num", "nb", "max", "count", "cnt", "left", "no", "total", "remaining"})


def is_attempt_counter(name: str) -> bool:
    """Whether a name counts attempts, by whole words (snake_case or camelCase, or an attempt
    word run together with a counting affix): `retry_count`, `numAttempts` and `maxretries`
    do; `entry`, `retrieved`, `retriever` and `attempted` do not."""
    for word in _WORD.findall(name):
        word = word.lower()
        if word in ATTEMPT_WORDS:
            return True
        for attempt in ATTEMPT_WORDS:
            if word.startswith(attempt) and word[len(attempt) :] in _AFFIXES:
                return True
            if word.endswith(attempt) and word[: -len(attempt)] in _AFFIXES:
                return True
    return False


# Retry libraries and task queues: the name a retry context's policy is read and worded by.
TENACITY = "tenacity"
BACKOFF = "backoff"
STAMINA = "stamina"
RETRYING = "retrying"
RETRY_PACKAGE = "retry"
CELERY = "celery"
# Celery's own Task class, as the base of a project's task class, and the app's class name (an
# app made with `task_cls=` gives every task that class's `retry()`)
# the names a task queue's task decorator ends with (`@app.task`, `@shared_task`)
TASK_DECORATORS = frozenset({"task", "shared_task"})
CELERY_TASK_CLASSES = frozenset({"celery.Task", "celery.app.task.Task", "celery.task.Task"})
CELERY_APP = "Celery"
CELERY_CALL = "celery-call"  # a task's own `self.retry(countdown=...)` call
RECURSION = "recursion"  # a function that calls itself again from a failure handler
REQUEUE = "requeue"  # work a queue (or the project's own runner) puts back after a failure
DRAMATIQ = "dramatiq"
HUEY = "huey"
RQ = "rq"
URLLIB3 = "urllib3"  # its `Retry(...)`, also through requests

# decorators that re-run the function they wrap: qualified name -> library
RETRY_DECORATORS = {
    "tenacity.retry": TENACITY,
    "tenacity.asyncio.retry": TENACITY,
    "backoff.on_exception": BACKOFF,
    "backoff.on_predicate": BACKOFF,
    "stamina.retry": STAMINA,
    "retrying.retry": RETRYING,
    "retry.retry": RETRY_PACKAGE,
    "retry.api.retry": RETRY_PACKAGE,
}
# decorators that call the function and hand back what it returns: around a generator function
# that is the generator, made before any of its code runs, so nothing is ever attempted again
# (stamina re-runs a generator while it is iterated)
GENERATOR_BLIND = frozenset({TENACITY, BACKOFF, RETRYING, RETRY_PACKAGE})
# iterators whose every item is one attempt (`for attempt in Retrying(...): with attempt:`)
RETRY_ITERATORS = {
    "tenacity.Retrying": TENACITY,
    "tenacity.AsyncRetrying": TENACITY,
    "tenacity.asyncio.AsyncRetrying": TENACITY,
    "stamina.retry_context": STAMINA,
}
# tenacity's waits: with a random component, without one, and the stop that never stops
TENACITY_RANDOM_WAITS = {
    "tenacity.wait_random",
    "tenacity.wait_random_exponential",
    "tenacity.wait_exponential_jitter",
    "tenacity.wait_full_jitter",
    "tenacity.wait.wait_random",
    "tenacity.wait.wait_random_exponential",
    "tenacity.wait.wait_exponential_jitter",
}
TENACITY_FIXED_WAITS = {
    "tenacity.wait_fixed",
    "tenacity.wait_exponential",
    "tenacity.wait_incrementing",
    "tenacity.wait_chain",
    "tenacity.wait_none",
    "tenacity.wait_combine",
}
TENACITY_UNBOUNDED_STOPS = {"tenacity.stop_never"}
# tenacity's tests of a function's answer (not of an exception): `retry=retry_if_result(lambda r: r is None)`
RESULT_TESTS = frozenset({"tenacity.retry_if_result", "tenacity.retry_if_not_result"})
# tenacity's test that goes round on every answer until the call fails with the type named
# (`retry=retry_unless_exception_type(AgentGone)`): it waits for something to go away
UNTIL_FAILURE_TESTS = frozenset({"tenacity.retry_unless_exception_type"})
# tenacity's tests of the exception alone (a decorator made only of these never goes round on an answer)
EXCEPTION_TESTS = frozenset(
    {"tenacity.retry_if_exception_type", "tenacity.retry_if_not_exception_type", "tenacity.retry_if_exception"}
    | {
        "tenacity.retry_if_exception_message",
        "tenacity.retry_if_not_exception_message",
        "tenacity.retry_if_exception_cause_type",
    }
)
# urllib3's retry policy class, by every path it is imported from
URLLIB3_RETRY = {
    "urllib3.Retry",
    "urllib3.util.Retry",
    "urllib3.util.retry.Retry",
    "requests.adapters.Retry",
    "requests.packages.urllib3.util.retry.Retry",
    "requests.packages.urllib3.Retry",
}
# Celery keywords that only make sense on a task decorator
CELERY_TASK_KEYWORDS = {
    "autoretry_for",
    "retry_backoff",
    "retry_kwargs",
    "max_retries",
    "bind",
    "acks_late",
    "default_retry_delay",
    "retry_jitter",
    "retry_backoff_max",
}
# the module an RQ `Retry(...)` comes from, and Dramatiq's, as a qualified name starts
RQ_PREFIX = "rq."
# Exceptions that say "nothing there yet" rather than "the work failed": an empty or full queue
# (`queue.Empty`, `asyncio.QueueFull`, a producer's local `BufferError`), a non-blocking read, or a
# wait that ended with nothing to take or hold (`DequeueTimeout`, `ConsumerTimeout`, `LockTimeout`):
# the attempt itself waited, and a loop that goes round on them waits for input (not
# `ReadTimeout`, a request that got no answer, nor a `StorageFull` the service answered)
NOT_READY_ERRORS = re.compile(
    r"^(\w*Queue(Empty|Full)|Empty|Full|BlockingIOError|BufferError"
    r"|(Dequeue|Poll|Pop|Take|Receive|Consume|Listen|Lock|Acquire|Wait)\w*Timeout)$"
)
# ... and what taking from an empty list, deque or dict raises: "nothing there yet" where the
# attempt is a `pop()` (a cache drained before it is refilled), a bug elsewhere
EMPTY_CONTAINER_ERRORS = frozenset({"IndexError", "KeyError"})
TAKE_METHODS = frozenset({"pop", "popleft", "popitem"})
# ... and a bare timeout (the builtin's, a socket's, asyncio's) from a call that only waits to take
# or hold something for as long as it is told (`drain_events(timeout=5)`, `consumer.poll(timeout)`,
# `sock.recv(n)` on a socket given a timeout, `lock.acquire(timeout=5)`, `await asyncio.wait_for(
# loop.sock_recv(sock, n), timeout=5)`): a wait that ended with nothing, not a request left
# unanswered. By the called name, whole.
TIMED_TAKES = frozenset(
    {
        "drain_events",
        "drain",
        "poll",
        "consume",
        "receive",
        "recv",
        "recv_into",
        "recvfrom",
        "sock_recv",
        "sock_recv_into",
        "sock_accept",
        "dequeue",
        "acquire",
        "listen",
        "get_message",
    }
)
# of those, a socket's own reads, which time out only where the socket was given a time; and
# what sends on one (a round that sends, then reads, timed out waiting for an answer to it)
SOCKET_READS = frozenset({"recv", "recv_into", "recvfrom", "recvfrom_into"})
SOCKET_SENDS = frozenset({"send", "sendall", "sendto", "sendmsg", "write"})
# the words of a call that sends something on (`basic_publish`, `produce`, `sendall`): a round
# that makes one is a request waiting for its answer, not a consumer waiting for a message
SENDING_WORDS = frozenset({"publish", "send", "sendall", "post", "produce", "emit", "enqueue", "push", "put", "write"})
BARE_TIMEOUTS = frozenset(
    {
        "TimeoutError",
        "builtins.TimeoutError",
        "socket.timeout",
        "asyncio.TimeoutError",
        "concurrent.futures.TimeoutError",
    }
)
# ... and what looking for an item in an answer raises when it holds none (`[n for n in nodes
# if n.id == sid][0]`, `next(j for j in jobs if ...)`): "not listed yet", a poll's answer
NOT_FOUND_IN_ANSWER = frozenset({"IndexError", "StopIteration"})
# words of a call that runs a service until told to stop (`serve(stop)`, `consume_forever(stop)`)
SERVICE_WORDS = frozenset({"serve", "server", "run", "consume", "listen", "loop", "forever", "worker", "agent"})
# ... and what a lookup raises when the record is not there (`StorageNotFoundError`,
# `DoesNotExist`, `NoResultFound`, S3's `NoSuchKey`): around a round that only reads, the record
# another worker makes has not appeared yet
NOT_THERE = re.compile(r"(NotFound|DoesNotExist|NoResultFound|NoSuchKey)(Error|Exception)?$")
# ... and a project's own taking method named by its first word (`tasks.pop_task()`); not "take",
# which also names acts (`take_payment`, `take_snapshot`)
TAKE_VERBS = frozenset({"pop", "dequeue"})

# what asks a person for a value: a loop or recursion around one asks again, it retries nothing
PROMPT_CALLS = frozenset({"input", "raw_input", "getpass", "prompt"})

# calls that take the next item of work (`queue.get()`, `heap.pop()`, `sock.recv()`): a loop that
# makes one before its `try` handles a new item each pass, rather than re-attempting the same one
NEXT_ITEM_CALLS = frozenset(
    {"pop", "popleft", "heappop", "get", "get_nowait", "next", "readline", "recv", "receive", "read", "poll"}
    | {"dequeue", "take", "popitem"}
    # a person asked again (`value = input("API id: ")`): each pass tries what they type
    | PROMPT_CALLS
)

# an address that reaches this machine (IPv4 127/8, IPv6 ::1, `localhost`)
LOOPBACK = re.compile(r"^(127(\.\d{1,3}){3}|::1|localhost)$", re.I)
# operations on this machine's files: a retry of one (a file lock taken again, a file opened
# again) waits for another local process, not for a shared service, so no herd of clients
# comes back at once and a fixed wait needs no jitter
LOCAL_FILE_OPERATIONS = frozenset(
    {
        "open",
        "io.open",
        "os.open",
        "os.link",
        "os.symlink",
        "os.mkdir",
        "os.makedirs",
        "os.rename",
        "os.replace",
        "os.remove",
        "os.unlink",
        "os.rmdir",
        "fcntl.flock",
        "fcntl.lockf",
        "msvcrt.locking",
        "shutil.move",
        "shutil.copy",
        "shutil.copy2",
        "shutil.copyfile",
        "shutil.rmtree",
    }
)

# errors only this machine's files raise when another local process holds one: a file created
# with O_EXCL that exists (a lock file), a non-blocking lock that is taken
LOCAL_CONTENTION_ERRORS = frozenset({"FileExistsError", "BlockingIOError"})
# a database in a file on this machine: its errors (`sqlite3.OperationalError`, "database is
# locked", "no such column") come from no service, and no herd of clients comes back to one
LOCAL_DATABASE_MODULES = ("sqlite3.",)
# ... and the error number that says so of a local address still bound (not EEXIST, which a
# remote file system's client raises too)
LOCAL_CONTENTION_ERRNOS = frozenset({"EADDRINUSE"})

# Exceptions that say the attempt lost a race to another writer (an optimistic-concurrency
# conflict, a serialization failure, a deadlock victim): each one means another transaction
# committed, so retrying them always ends, however many attempts it takes. By the class name's
# last part; a bare `Conflict` (an HTTP 409, "already exists") is not one.
LOST_RACE_ERRORS = re.compile(
    r"(?:Write|Version|Edit|Update|Revision|Concurrency|Transaction)Conflict"
    r"|StaleData|StaleObject|OptimisticLock|ConcurrentModification|ConcurrentUpdate|SerializationFailure|Deadlock"
    r"|(?<![A-Za-z])WatchError"  # Redis: a key watched for a MULTI transaction changed
)

# ... and what another writer of the same database causes, by the ORM's class names: a
# duplicate insert, a row another task has not created yet (`Docket.DoesNotExist`). Not a lock
# another worker holds: every task waiting on it comes back at once and contends again.
ANOTHER_WRITER_ERRORS = re.compile(
    r"^(?:IntegrityError|UniqueViolation|DoesNotExist|ObjectDoesNotExist|NoResultFound)$"
)

# classes whose `run()` is the whole life of a thread or a process: a retry around one that
# starts a service (a call named here, as a statement) restarts the service
THREAD_CLASSES = frozenset({"threading.Thread", "multiprocessing.Process"})
SERVICE_STARTS = frozenset({"start", "serve", "serve_forever", "run_forever", "listen", "consume"})
# a loop test of a flag named for a service's life (`not stop.is_set()`, `self.running`)
SERVICE_LIFE = re.compile(
    r"(?i)(?:^|_)(?:running|alive|stop\w*|shut\w*|clos(?:ed|ing)|is_set|quit\w*|terminat\w*|serving)$"
)

SLEEPS = {"time.sleep", "asyncio.sleep", "gevent.sleep", "trio.sleep", "anyio.sleep", "eventlet.sleep"}

# A call that draws a random number (`random.uniform`, `self._random()`; not a token)
RANDOM_DRAW = re.compile(r"random|uniform|randint|randrange|gauss|triangular|expovariate", re.IGNORECASE)

# A parameter or keyword that sets a wait between attempts (`backoff_factor`, `retry_delay`)
WAIT_SETTING = re.compile(r"backoff|delay|wait|interval", re.IGNORECASE)
# ... and one that spreads the waits at random (`backoff_jitter`; not `access_token`, `spread`)
JITTER_SETTING = re.compile(r"jitter", re.IGNORECASE)

# a call to another system, by its receiver's name (`points_client.Upsert`, `self.session.post`)
REMOTE_RECEIVER = re.compile(r"client|session|api\b|_api|http|conn|stub|transport|sock|channel|grpc", re.I)
# what a handler does about a failure before the next attempt, by the called name: reconnect,
# refresh or renew a token, log in again, reset or rotate a client, open a new session, move
# to the next node or host
RECOVERY = re.compile(
    r"connect|refresh|renew|login|log_in|auth|reset|rotate|reopen|failover|switch|next_(node|host|server|endpoint)"
    r"|new_(session|client|connection|channel)|_factory$|^close$|invalidate",
    re.I,
)
# a shared name (`global`) that holds a client or credentials: dropping it makes the next attempt
# build them anew; credentials by name, and a call that renews them (`refresh_token()`, `login()`)
SHARED_CLIENT = re.compile(r"client|conn|session|socket|channel|token|credential|auth", re.I)
CREDENTIAL_STATE = re.compile(r"token|credential|auth|bearer|jwt|cookie|session", re.I)
CREDENTIAL_RENEWAL = re.compile(
    r"refresh|renew|re_?auth|re_?login|login|log_in|sign_?in|authenticate|(get|fetch|new|acquire|obtain|request)_?\w*token"
    r"|^_*(update|reset)_(auth|tokens?|credentials?|cookies?)(_(params|headers?|data))?$",
    re.I,
)
# a flag that tells a call to build the credentials anew (`prepare(params, reauth=True)`), whole:
# not `refresh=True` (a cache's), nor `skip_refresh`
CREDENTIAL_RENEWAL_FLAG = re.compile(
    r"^(force_)?(re_?auth(enticate)?|re_?login)$|^(force_)?refresh_(token|credentials|auth)s?$|^renew_(token|credentials)$",
    re.I,
)
# what bounds one attempt in time rather than waiting between attempts
TIMEOUT_WRAPPERS = frozenset({"asyncio.wait_for", "asyncio.timeout", "async_timeout.timeout", "anyio.fail_after"})
# what names a wait done elsewhere (`self._backoff(attempt)`, `wait_before_retry()`, a retry
# policy's `policy.handle_retry()` or `handler.prepare_for_next_attempt(...)`)
WAIT_WORDS = re.compile(r"sleep|wait|backoff|delay|pause|retry|next_attempt", re.I)
# calls that only wait (an event or condition to be set, a time to pass): a `try` of nothing
# else that times out has waited its interval, it has not failed (`asyncio.wait_for(stop.wait(),
# timeout=interval)` in a loop that does its work every interval)
WAIT_ONLY_CALLS = frozenset({"wait", "wait_for", "sleep"})
# calls that wait, for as long as they are told, for work already in flight (a future's
# `f.result(timeout=60)`, a thread's `join(5)`, `as_completed(fs, timeout=60)`): their timeout
# ends the wait, and waiting again sends nothing
IN_FLIGHT_WAITS = frozenset({"result", "exception", "join", "as_completed"})
# a server's readiness or health endpoint (`/.well-known/ready`, `/healthz`, `/readyz`,
# `/livez`, `/ping`, or a relative `"healthcheck"`): a loop that asks only this waits for the
# server to come up
READINESS_PATH = re.compile(
    r"(?:/|^[rbuf]*[\"'])(\.well-known/)?(ready|readyz|health|healthz|healthcheck|livez|alive|ping)(?![\w-])", re.I
)
# a method that probes whether a server is up (`check_health(db)`, `health_check()`,
# `is_healthy()`, `ping()`): a loop that calls only this samples health, it re-attempts no work
READINESS_CALL = re.compile(
    r"^_*(?:(?:check_|run_)?health(?:_?check)?|is_(?:healthy|alive|ready|up)|ping|readyz?|livez?)$", re.I
)

# what only (re)establishes a connection (`sock.connect(addr)`, `client.reconnect()`) or a
# subscription (`pubsub.resubscribe()`, on a receiver named for a link: a subscription is also
# how a customer starts a paid plan): a loop that does nothing else keeps a long-lived link up,
# and connection errors are what it can raise; making a socket and setting it up before it connects
# (`socket.socket(...)`, `sock.settimeout(5)`) is part of opening the link
CONNECT_CALL = re.compile(r"^_*(?:re)?connect$|^(?:open|create)_connection$|^socket$|^set(?:timeout|sockopt|blocking)$")
SUBSCRIBE_CALL = re.compile(r"^_*(?:re|p|un|pun)?subscribe$")
LINK_RECEIVER = re.compile(
    r"(?:^|[._])(?:pubsub|pb|sub|subscriber|subscription|channel|conn|connection|client|socket|sock|ws|redis|broker|consumer|listener|observer)$",
    re.I,
)
# a class whose methods hold a link (`class Subscription`, `class RedisPubSub`)
LINK_CLASS = re.compile(r"pubsub|subscri|channel|connection|client|socket|consumer|listener|observer", re.I)

# A context that cancels what it holds when time runs out, by where it is defined: a loop inside
# one is bounded by it, if the loop gives it a chance (an `await`) and does not swallow the
# cancellation (`except BaseException`, `except CancelledError`, a bare `except`)
DEADLINE_CONTEXTS = frozenset(
    {
        "asyncio.timeout",
        "asyncio.timeout_at",
        "async_timeout.timeout",
        "async_timeout.timeout_at",
        "anyio.fail_after",
        "anyio.move_on_after",
        "trio.fail_after",
        "trio.fail_at",
        "trio.move_on_after",
        "trio.move_on_at",
    }
)
# a call named for deciding whether to go round again (`policy.should_retry(resp, attempt=n)`,
# `can_retry(n)`, `give_up(n)`), which a retry loop hands its attempt count
DECISION_CALL = re.compile(r"retr|attempt|give_?up|backoff|continue|again", re.I)


# Calls that never return, so a block that ends with one leaves like a `raise`: the process
# ends (`sys.exit(1)`, `os._exit(2)`, `exit()`), or a web framework raises the HTTP error for
# the handler (`flask.abort(400)`; a bare `abort(...)` counts when given an HTTP status first,
# `analysis/retry/exits.py`), or frappe raises its `ValidationError` with the message
# (`frappe.throw(_("Only active sites"))`). By the bare name, or by module and name.
NEVER_RETURNS_NAMES = frozenset({"exit", "quit"})
NEVER_RETURNS_ATTRIBUTES = frozenset(
    {("sys", "exit"), ("os", "_exit"), ("os", "abort"), ("flask", "abort"), ("frappe", "throw")}
)

# decorators that wrap a function without keeping it anywhere (a later `def` of the same name
# leaves the wrapped one unreachable): retry decorators, caches, method kinds
PLAIN_WRAPPERS = frozenset({*RETRY_DECORATORS, "functools.lru_cache", "functools.cache", "staticmethod", "classmethod"})

# what a handler that catches every exception names (or a bare `except:`)
CATCH_ALL = frozenset({"Exception", "BaseException", "builtins.Exception", "builtins.BaseException"})

# what a value says while the work is still under way: `row["pending"] == 1`, `state == "running"`
NOT_READY_STATES = re.compile(r"pending|running|processing|in_progress|queued|generating|building|not_?ready", re.I)
# what it says once the work is over, whichever way: `action.status == "completed"`
DONE_STATES = re.compile(r"ready|done|finish|complet|succe|available|active|\bok\b", re.I)
# of those, the words that say only that the work is over, not how it went: `not is_complete` is a "not yet"
OVER = re.compile(r"^(ready|done|finished|complete|completed|available)$")  # whole words, lower-cased
