"""Three tasks that retry with a fixed countdown. The beat schedule starts them all; a view also
queues `send_receipts` for each order, and an admin hook `refresh_prices` (under another name,
handed on unrun), so many of their runs may retry in step. Only
`sync_stock`'s runs are one per tick: its finding is `low`."""

from celery import shared_task

from shop.warehouse import StockUnavailable, pull_stock, send_receipt


@shared_task(bind=True, max_retries=3)
def sync_stock(self):
    try:
        pull_stock()
    except StockUnavailable as exc:
        raise self.retry(exc=exc, countdown=60)  # expect: IDM202 "self.retry() waits a countdown with no random component"


@shared_task(bind=True, max_retries=3)
def send_receipts(self, order_id=None):
    try:
        send_receipt(order_id)
    except StockUnavailable as exc:
        raise self.retry(exc=exc, countdown=60)  # expect: IDM202 "self.retry() waits a countdown with no random component"


@shared_task(bind=True, max_retries=3)
def refresh_prices(self):
    try:
        pull_stock()
    except StockUnavailable as exc:
        raise self.retry(exc=exc, countdown=60)  # expect: IDM202 "self.retry() waits a countdown with no random component"
