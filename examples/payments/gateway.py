"""Client for the card processor's HTTP API."""

from __future__ import annotations

import hashlib
import json
import random
import time
import uuid

import requests

API = "https://api.processor.example/v1"


class GatewayError(Exception):
    pass


def create_charge(order_id: str, amount_cents: int, currency: str) -> dict:
    """BUG: a new Idempotency-Key per attempt, so a timed-out charge that succeeded is charged again."""
    for attempt in range(5):
        try:
            response = requests.post(
                f"{API}/charges",
                json={"order": order_id, "amount": amount_cents, "currency": currency},
                headers={"Idempotency-Key": str(uuid.uuid4())},
                timeout=10,
            )
            response.raise_for_status()
            return response.json()
        except (requests.ConnectionError, requests.Timeout):
            time.sleep(random.uniform(0, 2**attempt))
    raise GatewayError(f"charge for {order_id} did not go through")


def create_charge_fixed(order_id: str, amount_cents: int, currency: str, key: str) -> dict:
    """The caller makes `key` once per payment attempt by the user and stores it with the order."""
    for attempt in range(5):
        try:
            response = requests.post(
                f"{API}/charges",
                json={"order": order_id, "amount": amount_cents, "currency": currency},
                headers={"Idempotency-Key": key},
                timeout=10,
            )
            response.raise_for_status()
            return response.json()
        except (requests.ConnectionError, requests.Timeout):
            time.sleep(random.uniform(0, 2**attempt))
    raise GatewayError(f"charge for {order_id} did not go through")


def capture(charge_id: str) -> dict:
    """BUG: the key changes every second, so a retry a second later captures twice."""
    key = f"capture-{charge_id}-{int(time.time())}"
    response = requests.post(f"{API}/charges/{charge_id}/capture", headers={"Idempotency-Key": key}, timeout=10)
    return response.json()


def capture_fixed(charge_id: str) -> dict:
    response = requests.post(
        f"{API}/charges/{charge_id}/capture", headers={"Idempotency-Key": f"capture-{charge_id}"}, timeout=10
    )
    return response.json()


def payout(payload: dict) -> dict:
    """BUG: two genuine payouts of the same amount to the same account collapse into one."""
    key = hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()
    response = requests.post(f"{API}/payouts", json=payload, headers={"Idempotency-Key": key}, timeout=10)
    return response.json()


def payout_fixed(payout_id: str, payload: dict) -> dict:
    response = requests.post(
        f"{API}/payouts", json=payload, headers={"Idempotency-Key": f"payout-{payout_id}"}, timeout=10
    )
    return response.json()
