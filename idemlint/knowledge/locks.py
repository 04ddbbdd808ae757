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
PROCESS_LOCKS = ("threading.", "asyncio.", "multiprocessing.", "trio.", "anyio.", "gevent.", "eventlet.")

_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def names_a_shared_lock(qualname: str) -> bool:
    """`django_pglocks.advisory_lock`, `cache.lock`, `redis_client.lock`: a call that takes a lock
    other processes honour (by its name); not `threading.Lock`, not `unlock`, `block_signals`."""
    if qualname.startswith(PROCESS_LOCKS):
        return False
    words = _WORD.findall(qualname.rsplit(".", 1)[-1])
    return bool(words) and words[-1].lower() in LOCK_WORDS
