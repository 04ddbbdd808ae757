import requests
from celery import shared_task

from shop.tasks.retrying import log_failure, retry_on_network, retrying


@shared_task(bind=True, max_retries=5)
def notify(self, order_id):
    try:
        requests.post("https://hooks.example/orders", json={"id": order_id}, timeout=5)  # expect: IDM301 "Celery task that calls self.retry()"
    except requests.RequestException as exc:
        retry_on_network(self, exc)


@shared_task(bind=True, max_retries=5)
def notify_in_context(self, order_id):
    with retrying(self):
        requests.post("https://hooks.example/orders", json={"id": order_id}, timeout=5)  # expect: IDM301 "Celery task that calls self.retry()"


@shared_task(bind=True, max_retries=5)
def notify_logged(self, order_id):
    try:
        requests.post("https://hooks.example/orders", json={"id": order_id}, timeout=5)  # ok: IDM301 the helper only logs: nothing retries the task
    except requests.RequestException as exc:
        log_failure(self, exc)
