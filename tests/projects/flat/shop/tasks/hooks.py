import requests
from celery import Celery, shared_task

from shop.tasks.base import Logged, RetryOnNetwork

app = Celery("shop")


@shared_task(base=RetryOnNetwork)
def notify(order_id):
    requests.post("https://hooks.example/orders", json={"id": order_id}, timeout=5)  # expect: IDM301 "Celery task with autoretry_for (from its base class)"


@shared_task(base=RetryOnNetwork)
def notify_once(order_id):
    requests.post("https://hooks.example/orders", json={"id": order_id}, headers={"Idempotency-Key": f"order-{order_id}"}, timeout=5)  # ok: IDM301 -- the key is the same on every attempt


@shared_task(base=Logged)
def notify_logged(order_id):
    requests.post("https://hooks.example/orders", json={"id": order_id}, timeout=5)  # ok: IDM301 -- the base class declares no retries


@app.task(base=RetryOnNetwork)
def notify_app(order_id):
    requests.post("https://hooks.example/orders", json={"id": order_id}, timeout=5)  # expect: IDM301 "Celery task with autoretry_for (from its base class)"
