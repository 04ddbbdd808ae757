import random

import requests

from shop.jobs.waits import sleep_ms


def put_item(url, body):
    for attempt in range(5):
        try:
            return requests.put(url, json=body, timeout=5)
        except requests.ConnectionError:
            sleep_ms(500)  # expect: IDM202 "sleep_ms() sleeps a delay with no random component (at shop/jobs/waits.py:5)"


def put_item_jittered(url, body):
    for attempt in range(5):
        try:
            return requests.put(url, json=body, timeout=5)
        except requests.ConnectionError:
            sleep_ms(random.randint(100, 500 * 2**attempt))  # ok: IDM202 the caller passes a random delay
