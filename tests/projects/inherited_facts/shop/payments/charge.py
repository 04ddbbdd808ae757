import random
import time

import requests

from shop.keys.named import payment_key


def charge(order):
    for attempt in range(3):
        try:
            return requests.post(
                "https://psp.example/charges",
                json={"order": order.id, "amount": order.total},
                headers={"Idempotency-Key": payment_key()},  # expect: IDM001 "payment_key()"
                timeout=10,
            )
        except requests.ConnectionError:
            time.sleep(random.uniform(0, 2**attempt))
    raise RuntimeError("payment service unavailable")


def charge_once(order):
    key = payment_key()  # ok: IDM001 made once, before the retry loop
    for attempt in range(3):
        try:
            return requests.post(
                "https://psp.example/charges",
                json={"order": order.id, "amount": order.total},
                headers={"Idempotency-Key": key},
                timeout=10,
            )
        except requests.ConnectionError:
            time.sleep(random.uniform(0, 2**attempt))
    raise RuntimeError("payment service unavailable")
