"""Sessions built with Retry subclasses that decide their own wait (retry_overrides.py): their
backoff is theirs, not the keywords'."""

import requests

from billing.retry_overrides import JitterRetry, SetJitterRetry


def build_jittered_session():
    session = requests.Session()
    retry = JitterRetry(total=5, backoff_factor=0.3)  # ok: IDM202 get_backoff_time draws the wait
    session.mount("https://", requests.adapters.HTTPAdapter(max_retries=retry))
    return session


def build_preset_session():
    session = requests.Session()
    retry = SetJitterRetry(total=5, backoff_factor=0.3)  # ok: IDM202 its __init__ sets backoff_jitter
    session.mount("https://", requests.adapters.HTTPAdapter(max_retries=retry))
    return session
