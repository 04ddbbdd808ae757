"""Snapshot input for the key rules, IDM0xx: each rule once."""

import hashlib
import json
import time
import uuid

import requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

PSP_URL = "https://psp.example"


@retry(
    retry=retry_if_exception_type(requests.ConnectionError),
    stop=stop_after_attempt(3),
    wait=wait_random_exponential(),
)
def charge(order):
    key = str(uuid.uuid4())
    return requests.post(f"{PSP_URL}/charges", json=order, headers={"Idempotency-Key": key}, timeout=10)


def refund(order):
    key = f"refund-{order.id}-{int(time.time())}"
    return requests.post(f"{PSP_URL}/refunds", json={"order": order.id}, headers={"Idempotency-Key": key}, timeout=10)


def payout(payout):
    payload = {"amount": payout.amount, "iban": payout.iban}
    key = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    return requests.post(f"{PSP_URL}/payouts", json=payload, headers={"Idempotency-Key": key}, timeout=10)


HANDLERS = [charge, refund, payout]  # what the service registers: each function is called
