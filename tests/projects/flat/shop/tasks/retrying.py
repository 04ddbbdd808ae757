"""Helpers tasks hand themselves to: they decide when the task is retried."""

import contextlib

import requests


def retry_on_network(task, exc):
    raise task.retry(exc=exc, countdown=5)


@contextlib.contextmanager
def retrying(task):
    try:
        yield
    except requests.RequestException as exc:
        raise task.retry(exc=exc) from exc


def log_failure(task, exc):
    print(task.name, exc)
