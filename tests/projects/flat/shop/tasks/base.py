"""Task classes the task modules name as `base=`; their retry settings are judged here, once."""

from celery import Task
from requests import RequestException


class RetryOnNetwork(Task):
    autoretry_for = (RequestException,)
    retry_backoff = True
    max_retries = 5


class RetryEverything(Task):
    autoretry_for = (Exception,)  # expect: IDM201 "retries every exception"
    retry_backoff = True
    max_retries = 5


class Logged(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo):
        print(task_id, exc)
