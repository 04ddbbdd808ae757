"""Work handed to the retry helpers of other modules: their loops run it once per attempt."""

import functools
import uuid

import requests

from payouts import retrying
from payouts.retrying import call_once, with_retries
from payouts.tenacious import persistently

PSP_URL = "https://psp.example.com/v1"


def refund(client, charge_id, amount):
    return with_retries(lambda: client.refund(charge_id, amount=amount, idempotency_key=str(uuid.uuid4())))  # expect: IDM001 "every attempt of with_retries() on line 16"


def capture(client, charge_id):
    def attempt():
        return client.capture(charge_id, idempotency_key=str(uuid.uuid4()))  # expect: IDM001 "every attempt of retrying.with_retries() on line 23"

    return retrying.with_retries(attempt)


def transfer(client, transfer_request):
    return persistently(lambda: client.transfers.create(transfer_request, idempotency_key=str(uuid.uuid4())))  # expect: IDM001 "every attempt of persistently() on line 27"


def notify(order):
    return with_retries(lambda: requests.post(f"{PSP_URL}/notifications", json={"order": order.id}, timeout=5))  # expect: IDM301 "retried by with_retries() on line 31"


def refund_once(client, charge_id, amount):
    return call_once(lambda: client.refund(charge_id, amount=amount, idempotency_key=str(uuid.uuid4())))  # ok: IDM001 call_once() calls it once


def refund_with_key_made_first(client, charge_id, amount):
    key = str(uuid.uuid4())  # ok: IDM001 made once, closed over by the lambda
    return with_retries(lambda: client.refund(charge_id, amount=amount, idempotency_key=key))


def refund_partial(client, charge_id, amount):
    # ok: IDM001 - the partial is built once, with one key, and resent on every attempt
    return with_retries(functools.partial(client.refund, charge_id, amount=amount, idempotency_key=str(uuid.uuid4())))
