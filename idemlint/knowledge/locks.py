"""Locks that serialise the runs of a decision across processes and machines.

A read-decide-write inside one is not a race: a duplicate delivery waits for the first run to
finish and then reads what it wrote. A lock of one process (`threading.Lock()`) does not stop a
duplicate that another worker or machine runs."""

from __future__ import annotations

import re

# the words that name a lock, as the last word of what a `with` calls: `advisory_lock(...)`,
# `cache.lock(...)`, `redis.lock(...)`, `Redlock(...)`, `NamedMutex(...)`; not `block`, `clock`
LOCK_WORDS = frozenset({"lock", "locked", "locking", "mutex", "redlock"})
# libraries whose locks hold within one process (or one machine's processes)
PROCESS_LOCKS = (
    "threading.",
    "_thread.",
    "asyncio.",
    "multiprocessing.",
    "trio.",
    "anyio.",
    "gevent.",
    "eventlet.",
    "filelock.",  # one machine's processes
    "fasteners.",
    "fcntl.",
    "portalocker.",
)
# the standard library's lock classes, by their own names: `ctx.Lock()` of a multiprocessing
# context, `Lock()` of an unknown module. A lock library's class of the same name (redis's
# `Lock`) is recognised by its module (SHARED_LOCK_LIBRARIES).
_STDLIB_LOCK_CLASSES = frozenset({"Lock", "RLock", "Semaphore", "BoundedSemaphore", "Condition", "FileLock"})
SHARED_LOCK_LIBRARIES = ("redis.", "redis_lock.", "pottery.", "sherlock.", "django_redis.", "aioredis.", "valkey.")
# a word before `lock` that says none is taken (`no_lock()`, `skip_lock()`)
_NO_LOCK = frozenset(
    {
        "no",
        "non",
        "not",
        "skip",
        "without",
        "ignore",
        "release",
        "check",
        "is",
        "has",
        "disable",
        "disabled",
        "fake",
        "dummy",
        "null",
        "noop",
    }
)

# what a project's `locked_<store>(key)` may hold its lock in, shared by every worker: not
# `locked_open`, `locked_dir`, `locked_pidfile`, `locked_memory_cache` (one machine's, one process's)
SHARED_LOCK_STORES = frozenset({"cache", "redis", "db", "database", "advisory", "task", "job", "row", "record"})


def says_whether_held(qualname: str) -> bool:
    """`with locked_cache(key) as held:`: a project's lock that answers whether it was won
    rather than waiting for it; its body runs either way unless it leaves when not held (or
    when it is used with no `as`, which cannot tell)."""
    words = [word.lower() for word in _WORD.findall(qualname.rsplit(".", 1)[-1])]
    return len(words) > 1 and words[0] == "locked"


_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def names_a_shared_lock(qualname: str) -> bool:
    """`django_pglocks.advisory_lock`, `cache.lock`, `redis_client.lock`, a project's
    `locked_cache(key)`: a call that takes a lock other processes honour (by its name); not
    `threading.Lock`, not `unlock`, `block_signals`, `locked_file`."""
    if qualname.startswith(PROCESS_LOCKS):
        return False
    last = qualname.rsplit(".", 1)[-1]
    if last in _STDLIB_LOCK_CLASSES and not qualname.startswith(SHARED_LOCK_LIBRARIES):
        return False
    words = [word.lower() for word in _WORD.findall(last)]
    if bool(words) and words[-1] in LOCK_WORDS and not (len(words) > 1 and words[-2] in _NO_LOCK):
        return True
    return len(words) > 1 and words[0] == "locked" and words[1] in SHARED_LOCK_STORES  # `locked_cache(key)`


def names_a_lock_decorator(qualname: str) -> bool:
    """`@huey.lock_task("sync")`, `@advisory_locked("key")`, `@redis_lock("key")`: a decorator
    named for a lock (its last word, or huey's `lock_task`) that takes one other processes honour.
    Not `retry_on_lock_timeout`, `lock_free`, `no_lock`, a process's or one machine's own
    (`threading.`, `interprocess_locked`, `file_lock`). The caller requires it be called with the
    lock's name or key, so a bare `@locked` (fasteners', on `self._lock`) is none."""
    words = [word.lower() for word in _WORD.findall(qualname.rsplit(".", 1)[-1])]
    if words[-2:] == ["lock", "task"]:
        return not qualname.startswith(PROCESS_LOCKS)
    return names_a_shared_lock(qualname) and not (len(words) > 1 and words[-2] in _MACHINE_LOCK)


# a word before `lock` that says the lock holds on one machine only
_MACHINE_LOCK = frozenset({"interprocess", "file", "thread", "process", "local"})


# ORM calls that lock the rows a query reads until the transaction ends (Django, SQLAlchemy)
ROW_LOCK_METHODS = frozenset({"select_for_update", "with_for_update", "with_lockmode"})
# a row lock another run passes by or shares: it does not wait for the first
LETS_OTHERS_ON = re.compile(r"skip_locked|SKIP\s+LOCKED|FOR\s+SHARE|FOR\s+KEY\s+SHARE|read\s*=\s*True", re.IGNORECASE)
# calls that run a locking query and fail where it finds no row (`.first()` may lock nothing)
LOCKS_A_ROW = frozenset({"get", "aget", "one", "scalar_one", "earliest", "latest"})


# calls that end the transaction, and the row locks taken in it
def names_a_transaction(text: str) -> bool:
    """Source text naming a database transaction a block opens or a decorator wraps:
    `transaction.atomic()`, `@atomic`, `session.begin()`, `db.transaction()`."""
    text = text.lower()
    return "atomic" in text or "transaction" in text or text.endswith(".begin")


ENDS_THE_TRANSACTION = frozenset({"commit", "rollback", "close", "savepoint_commit", "savepoint_rollback"})
# what a session does to its own transaction and identity map: ending it, reloading or forgetting
# what it holds (`db.rollback()` in a handler, `db.refresh(order)`). Nothing outside the
# database's own transaction is acted on, so a racing duplicate doing it too changes nothing.
SESSION_HOUSEKEEPING = ENDS_THE_TRANSACTION | frozenset({"refresh", "expire", "expunge"})

# the keywords with which a call that loads a row locks it (`frappe.get_doc(..., for_update=True)`,
# SQLAlchemy's `session.get(Model, pk, with_for_update=True)`)
LOCKING_KEYWORDS = frozenset({"for_update", "with_for_update"})
