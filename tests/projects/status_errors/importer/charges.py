"""A client wrapper that raises for a failure status: its POST is still a side effect."""

import requests
from celery import shared_task


class ApiClient:
    def __init__(self, base):
        self.base = base
        self.session = requests.Session()

    def post(self, path, data):
        response = self.session.post(self.base + path, json=data, timeout=10)
        response.raise_for_status()
        return response.json()


api = ApiClient("https://pay.example.com")


@shared_task(autoretry_for=(ConnectionError,), max_retries=3, retry_backoff=True)
def charge(order_id):
    return api.post("/charges", {"order": order_id})  # expect: IDM301 "api.post()"
