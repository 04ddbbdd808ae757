CELERY_BEAT_SCHEDULE = {
    "sync-stock": {"task": "shop.tasks.sync_stock", "schedule": 300.0},
    "send-receipts": {"task": "shop.tasks.send_receipts", "schedule": 60.0},
    "refresh-prices": {"task": "shop.tasks.refresh_prices", "schedule": 600.0},
}
