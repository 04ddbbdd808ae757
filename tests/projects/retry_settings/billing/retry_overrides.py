"""Retry subclasses that decide their own wait or settings: a `get_backoff_time` that draws the
wait at random, and an `__init__` that sets the jitter for every caller. Built in
sdk_overrides.py, neither is read as a plain `Retry`'s keywords."""

import random

import urllib3


class JitterRetry(urllib3.Retry):
    def get_backoff_time(self):
        return random.uniform(0, super().get_backoff_time())


class SetJitterRetry(urllib3.Retry):
    def __init__(self, **kwargs):
        kwargs["backoff_jitter"] = 0.5
        super().__init__(**kwargs)
