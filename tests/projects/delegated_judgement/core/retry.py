"""Retry loops whose handler catches every exception: quiet where a judging helper decides
whether to go round (it raises the errors it will not retry, and past the deadline it is
handed); reported where the helper only records the error."""

import time

from core.judge import on_error, record_error


def call_with_retry(target, predicate, timeout):
    deadline = time.monotonic() + timeout
    while True:  # ok: IDM203 on_error() raises past the deadline it is handed
        try:
            return target()
        except Exception as exc:  # ok: IDM201 on_error() raises what predicate() does not accept
            time.sleep(on_error(exc, deadline, predicate))


def call_with_logging(target, timeout):
    deadline = time.monotonic() + timeout
    while True:  # expect: IDM203
        try:
            return target()
        except Exception as exc:  # expect: IDM201 "retries every exception"
            time.sleep(record_error(exc, deadline))
