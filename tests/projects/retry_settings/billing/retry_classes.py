"""The project's own urllib3 `Retry`: one that logs what a 429 asks for, and one that decides
each retry itself. Either is the transport's retry policy wherever the project builds it."""

import logging

import urllib3

LOG = logging.getLogger(__name__)


class LoggingRetry(urllib3.Retry):
    def sleep_for_retry(self, response=None):
        if response is not None and response.headers.get("Retry-After"):
            LOG.warning("throttled; retrying after %s s", response.headers["Retry-After"])
        return super().sleep_for_retry(response)


class DecidingRetry(LoggingRetry):
    def is_retry(self, method, status_code, has_retry_after=False):
        return status_code == 403 and has_retry_after


class NotARetry:
    def __init__(self, **settings):
        self.settings = settings
