"""The words of a retry: how code names the counter of its attempts."""

from __future__ import annotations

import re

# the words of an attempt counter's name: `attempt`, `retries`, `n_tries`, `retry_count`,
# `tries_left`, `attemptNumber`, `nretries`
ATTEMPT_WORDS = frozenset({"attempt", "attempts", "retry", "retries", "retrying", "retried", "tries", "tried", "try"})
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def is_attempt_counter(name: str) -> bool:
    """Whether a name counts attempts, by whole words (snake_case or camelCase): `retry_count`
    and `numAttempts` do; `entry`, `retrieved`, `retriever` and `attempted` do not."""
    for word in _WORD.findall(name):
        word = word.lower()
        if word in ATTEMPT_WORDS or word[:1] == "n" and word[1:] in ATTEMPT_WORDS:
            return True
    return False
