from celery import shared_task
from requests import Timeout

from ..clients.psp import PspClient, psp


@shared_task(autoretry_for=(Timeout,), max_retries=3, retry_backoff=True)
def refund(payment_id, amount):
    psp.refund(payment_id, amount)  # expect: IDM301 "PspClient.refund()"


@shared_task(autoretry_for=(Timeout,), max_retries=3, retry_backoff=True)
def refund_with_new_client(payment_id, amount):
    client = PspClient()
    client.refund(payment_id, amount)  # expect: IDM301 "src/billing/clients/psp.py"
