"""Helpers a retry loop hands the error it caught: one decides (it raises what it will not
retry, and once the deadline has passed), the other only records it."""

import logging
import random
import time

log = logging.getLogger(__name__)


class RetryError(Exception):
    pass


def on_error(exc, deadline, predicate):
    if not predicate(exc):
        raise exc
    if deadline is not None and time.monotonic() > deadline:
        raise RetryError("deadline exceeded") from exc
    return random.uniform(0, 1)


def record_error(exc, deadline):
    log.warning("attempt failed: %s (deadline %s)", exc, deadline)
    return random.uniform(0, 1)


def check_error(exc, attempt):
    if not isinstance(attempt, int):
        raise TypeError("attempt must be an int")  # checks its own argument: it never raises the error
    log.info("attempt %s failed: %s", attempt, exc)
