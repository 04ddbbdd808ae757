import requests

from shop.orders import outcomes
from shop.orders.outcomes import close_out


def capture(order):
    try:
        requests.post("https://pay.example/captures", json={"order": order.id}, headers={"Idempotency-Key": order.key}, timeout=10)
    except requests.Timeout:  # expect: IDM302 "calls close_out(): state set to 'declined' at shop/orders/outcomes.py:7"
        close_out(order.id)  # expect: IDM102


def capture_or_hold(order):
    try:
        requests.post("https://pay.example/captures", json={"order": order.id}, headers={"Idempotency-Key": order.key}, timeout=10)
    except requests.Timeout:  # ok: IDM302 -- the helper records the outcome as pending
        outcomes.hold(order.id)  # expect: IDM102
