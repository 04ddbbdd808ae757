"""An HTTP client whose post() makes its own idempotency key: the SDK shape of gocardless."""

import uuid

import requests


class ApiClient:
    def __init__(self, base_url):
        self.base_url = base_url

    def post(self, path, body, headers=None):
        headers = headers or {}
        if "Idempotency-Key" not in headers:
            headers["Idempotency-Key"] = str(uuid.uuid4())  # ok: IDM001 made once per call; callers decide
        return requests.post(self.base_url + path, json=body, headers=headers, timeout=10)

    def get(self, path):
        return requests.get(self.base_url + path, timeout=10)


def new_key():
    return str(uuid.uuid4())


def notify(url, payload):
    return requests.post(url, json=payload, timeout=5)  # ok: IDM301 not retried here


def notify_keyed(url, payload, key):
    return requests.post(url, json=payload, headers={"Idempotency-Key": key}, timeout=5)


def charge(order, idempotency_key=None):
    key = idempotency_key or str(uuid.uuid4())
    return requests.post("https://pay.example/charges", json={"order": order}, headers={"Idempotency-Key": key}, timeout=5)
