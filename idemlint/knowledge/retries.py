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
