from functools import partial

from django.db import transaction

from shop.tasks import refresh_prices as prices_task


def after_price_upload(upload):
    transaction.on_commit(partial(prices_task.delay))
    return upload
