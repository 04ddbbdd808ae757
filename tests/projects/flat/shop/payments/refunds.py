"""A refund request that mints its own key when it is built: the key lives as long as the object."""

import uuid

import requests


class RefundRequest:
    def __init__(self, payment_id, amount):
        self.payment_id = payment_id
        self.amount = amount
        self.idempotency_key = str(uuid.uuid4())  # ok: IDM001 made once per object; the caller decides when

    def send(self):
        return requests.post(
            f"https://pay.example/payments/{self.payment_id}/refunds",
            json={"amount": self.amount},
            headers={"Idempotency-Key": self.idempotency_key},
            timeout=10,
        )
