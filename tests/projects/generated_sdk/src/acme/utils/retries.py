"""The client's retry: an attempt raises PermanentError for what a retry cannot fix, the loop
retries the rest with jittered, bounded waits."""

import random
import time

import httpx


class PermanentError(Exception):
    def __init__(self, inner):
        super().__init__(inner)
        self.inner = inner


class Retries:
    def __init__(self, status_codes, attempts=3):
        self.status_codes = status_codes
        self.attempts = attempts


def retry(func, retries):
    def do_request():
        try:
            response = func()
        except (httpx.NetworkError, httpx.TimeoutException):
            raise
        except Exception as error:
            raise PermanentError(error) from error
        if response.status_code in retries.status_codes:
            raise RuntimeError(response.status_code)
        return response

    return retry_with_backoff(do_request, retries.attempts)


def retry_with_backoff(func, attempts):
    for attempt in range(attempts):
        try:
            return func()
        except PermanentError as error:
            raise error.inner
        except Exception:
            time.sleep(random.uniform(0, 2**attempt))
    return func()
