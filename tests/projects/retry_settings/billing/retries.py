"""The project's own retry policies, in the shape of urllib3's `Retry`: a backoff factor, and
a jitter added to each wait only when asked for."""

import random


class PaceRetry:
    def __init__(self, max_retries=10, backoff_factor=0, backoff_jitter=0):
        self.max_retries = max_retries
        self.backoff_factor = backoff_factor
        self.backoff_jitter = backoff_jitter

    def pick_host(self, hosts):
        return random.choice(hosts)  # not a wait: the jitter stays opt-in

    def headers(self, auth):
        return {"Authorization": auth.get_token()}

    def backoff(self, attempt):
        wait = self.backoff_factor * 2**attempt
        if self.backoff_jitter:
            wait += random.random() * self.backoff_jitter
        return wait


class SpreadRetry:
    def __init__(self, backoff_factor=0, backoff_jitter=1.0):
        self.backoff_factor = backoff_factor
        self.backoff_jitter = backoff_jitter


class ClientSettings:
    def __init__(self, timeout=60, backoff_factor=2, access_token=None):
        self.timeout = timeout
        self.backoff_factor = backoff_factor
        self.access_token = access_token


class RangeRetry:
    """Each wait drawn at random within its range; the jitter adds only to a server's Retry-After."""

    def __init__(self, backoff_factor=0, retry_after_jitter=0):
        self.backoff_factor = backoff_factor
        self.retry_after_jitter = retry_after_jitter

    def backoff(self, attempt):
        return self.backoff_factor * 2**attempt * random.random()

    def after(self, seconds):
        return seconds + self.retry_after_jitter * random.random()
