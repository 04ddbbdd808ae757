"""Retried refunds that build the refund request per attempt, and one that builds it once."""

import requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from shop.payments.refunds import RefundRequest

RETRY = dict(
    retry=retry_if_exception_type(requests.ConnectionError),
    stop=stop_after_attempt(4),
    wait=wait_random_exponential(max=8),
)


@retry(**RETRY)
def refund(payment_id, amount):
    return RefundRequest(payment_id, amount).send()  # expect: IDM001 "RefundRequest() makes a new idempotency key"


def refund_once(payment_id, amount):
    return _send(RefundRequest(payment_id, amount))  # ok: IDM001 built once, outside the retry


@retry(**RETRY)
def _send(request):
    return request.send()
