import time

from requests import ConnectionError, Timeout

from shop.payments.client import ApiClient


class BaseService:
    def __init__(self, api_client):
        self._api_client = api_client

    def _attempt(self, method, path, params, headers):
        if method == "POST":
            return self._api_client.post(path, body=params, headers=headers)
        return self._api_client.get(path)

    def perform(self, *args, **kwargs):
        for retries_left in range(2, -1, -1):
            try:
                return self._attempt(*args, **kwargs)  # expect: IDM001 "ApiClient.post()"
            except (Timeout, ConnectionError):
                if retries_left == 0:
                    raise
                time.sleep(0.5)  # expect: IDM202

    def perform_keyed(self, method, path, params, key):
        headers = {"Idempotency-Key": key}
        for retries_left in range(2, -1, -1):
            try:
                return self._attempt(method, path, params, headers)  # ok: IDM001 the key is in the headers passed
            except (Timeout, ConnectionError):  # expect: IDM202 goes round again at once
                if retries_left == 0:
                    raise


class TypedService:
    def __init__(self):
        self.client = ApiClient("https://pay.example")

    def create(self, body):
        for _ in range(3):
            try:
                return self.client.post("/payments", body)  # expect: IDM001 "shop/payments/client.py"
            except Timeout:  # expect: IDM202 goes round again at once
                continue
