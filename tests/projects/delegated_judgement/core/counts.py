"""Helpers a retry loop hands its attempt count: one raises past the limit (the bare `raise`
re-raises the error its caller is handling), the other only logs it."""

import logging

log = logging.getLogger(__name__)


def check_attempts(attempt, attempts):
    if attempt > attempts:
        log.warning("giving up after %s attempts", attempt)
        raise


def note_attempts(attempt, attempts):
    if attempt > attempts:
        log.warning("%s attempts so far", attempt)
