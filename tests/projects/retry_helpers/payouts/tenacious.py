"""A helper that hands its argument on to tenacity: it sleeps and imports no HTTP library itself."""

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_random_exponential


def persistently(fn):
    return Retrying(
        stop=stop_after_attempt(3),
        wait=wait_random_exponential(max=5),
        retry=retry_if_exception_type(ConnectionError),
    )(fn)
