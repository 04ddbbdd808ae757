"""Sessions built with the project's own `Retry` subclasses (in retry_classes.py): read as the
urllib3 policy they are. The last is a class of the same name that is no retry at all."""

import requests

from billing.retry_classes import DecidingRetry, LoggingRetry, NotARetry


def build_session(retries, backoff_factor=0.3):
    session = requests.Session()
    # expect: IDM202 "has no backoff_jitter"
    retry = LoggingRetry(  # expect: IDM301 "retries POST at the transport"
        total=retries,
        allowed_methods=frozenset(["GET", "POST", "PUT", "DELETE"]),
        backoff_factor=backoff_factor,
        status_forcelist=(429, 500, 502, 503, 504),
    )
    session.mount("https://", requests.adapters.HTTPAdapter(max_retries=retry))
    return session


def build_forbidden_session(retries):
    session = requests.Session()
    # ok: IDM201 is_retry decides which 403 to retry
    retry = DecidingRetry(total=retries, status_forcelist=(403, 503), backoff_factor=0.5, backoff_jitter=0.5)
    session.mount("https://", requests.adapters.HTTPAdapter(max_retries=retry))
    return session


def build_plain_session():
    # ok: IDM202, IDM301 no retry policy
    settings = NotARetry(allowed_methods=frozenset(["POST"]), backoff_factor=1)
    return settings
