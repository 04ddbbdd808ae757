"""A rate-limit wait taken from the server's Retry-After, or else from a setting. The setting
is read through a getter of the class the parameter is named for (`retry_config`:
`RetryConfig`), which returns it as stored: every client waits the same time. Tricky
negatives: the class named for the parameter draws its wait at random, and a parameter
named for no project class is not guessed at."""

import time

import requests


def sleep(milliseconds):
    time.sleep(milliseconds / 1000.0)


def retry_after(error):
    value = error.response.headers.get("Retry-After")
    return int(value) * 1000 if value else None


def send(url, body, retry_config):
    for _attempt in range(retry_config.get_max_retries()):
        try:
            return requests.put(url, json=body, timeout=5)
        except requests.HTTPError as error:
            delay_ms = retry_after(error) or retry_config.get_delay_ms()
            sleep(delay_ms)  # expect: IDM202 "sleep() sleeps a delay with no random component"
    return None


def send_spread(url, body, spread_config):
    for _attempt in range(3):
        try:
            return requests.put(url, json=body, timeout=5)
        except requests.HTTPError as error:
            delay_ms = retry_after(error) or spread_config.get_delay_ms()
            sleep(delay_ms)  # ok: IDM202 SpreadConfig draws the wait at random
    return None


def send_with_options(url, body, options):
    for _attempt in range(3):
        try:
            return requests.put(url, json=body, timeout=5)
        except requests.HTTPError as error:
            delay_ms = retry_after(error) or options.get_delay_ms()
            sleep(delay_ms)  # ok: IDM202 no project class is named for `options`: its getter is unknown
    return None
