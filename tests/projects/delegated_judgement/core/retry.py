"""Retry loops whose handler catches every exception: quiet where a judging helper decides
whether to go round (it raises the errors it will not retry, and past the deadline it is
handed); reported where the helper only records the error."""

import random
import time

from core.counts import check_attempts, note_attempts
from core.judge import check_error, on_error, record_error


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


def call_with_a_checker(target, timeout):
    deadline = time.monotonic() + timeout
    attempt = 0
    while time.monotonic() < deadline:
        attempt += 1
        try:
            return target()
        except Exception as exc:  # expect: IDM201 "retries every exception" check_error() never raises what it is handed
            check_error(exc, attempt)
            time.sleep(random.uniform(0, 2))


def call_with_a_shortcut(target, predicate, timeout):
    deadline = time.monotonic() + timeout
    while True:  # expect: IDM203 the ConnectionError handler goes round without the judge
        try:
            return target()
        except ConnectionError:
            time.sleep(random.uniform(0, 2))
            continue
        except Exception as exc:  # ok: IDM201 on_error() raises what predicate() does not accept
            time.sleep(on_error(exc, deadline, predicate))


def call_with_a_request_timeout(target, predicate, client):
    while True:  # expect: IDM203 a request's timeout bounds one attempt, not the loop
        try:
            return target()
        except Exception as exc:  # ok: IDM201 on_error() raises what predicate() does not accept
            time.sleep(on_error(exc, client.timeout, predicate))


def call_and_judge_sometimes(target, predicate, timeout, strict):
    deadline = time.monotonic() + timeout
    while True:  # expect: IDM203 the judge runs only when strict
        try:
            return target()
        except Exception as exc:  # expect: IDM201 "retries every exception"
            if strict:
                on_error(exc, deadline, predicate)
            time.sleep(random.uniform(0, 2))


def fetch_judged(client, url, predicate, retries=3):
    try:
        return client.get(url)
    except Exception as exc:  # ok: IDM201 on_error() raises what predicate() does not accept
        if retries <= 0:
            raise
        time.sleep(on_error(exc, None, predicate))
        return fetch_judged(client, url, predicate, retries - 1)


def fetch_logged(client, url, retries=3):
    try:
        return client.get(url)
    except Exception as exc:  # expect: IDM201 "catches every exception" record_error() never raises what it is handed
        if retries <= 0:
            raise
        time.sleep(record_error(exc, None))
        return fetch_logged(client, url, retries - 1)


def call_counting(target, attempts=5):
    attempt = 1
    while True:  # ok: IDM203 check_attempts() in another module re-raises past the count it is handed
        try:
            return target()
        except ConnectionError:
            attempt += 1
            check_attempts(attempt, attempts)
            time.sleep(random.uniform(0, 2**attempt))


def call_noting(target, attempts=5):
    attempt = 1
    while True:  # expect: IDM203 note_attempts() only logs the count
        try:
            return target()
        except ConnectionError:
            attempt += 1
            note_attempts(attempt, attempts)
            time.sleep(random.uniform(0, 2**attempt))
