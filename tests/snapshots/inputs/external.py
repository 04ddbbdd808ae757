"""Snapshot input for the external-effect rules, IDM3xx: each rule once."""

import requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential


@retry(
    retry=retry_if_exception_type(requests.ConnectionError),
    stop=stop_after_attempt(3),
    wait=wait_random_exponential(),
)
def notify_shipping(order):
    return requests.post("https://shipping.example/orders", json={"order": order.id}, timeout=10)


def capture(order):
    try:
        requests.post(
            "https://psp.example/captures",
            json={"order": order.id},
            headers={"Idempotency-Key": order.key},
            timeout=10,
        )
    except requests.Timeout:
        order.status = "failed"
        order.save()


HANDLERS = [notify_shipping, capture]  # what the service registers: each function is called
