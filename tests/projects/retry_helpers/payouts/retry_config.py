"""Retry decorators built once for the other modules to apply: the settings are judged here."""

from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

network_retry = retry(
    retry=retry_if_exception_type(ConnectionError),
    stop=stop_after_attempt(4),
    wait=wait_random_exponential(max=8),
)

single_try = retry(stop=stop_after_attempt(1))


def audited(fn):
    return fn
