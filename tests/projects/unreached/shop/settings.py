SCHEDULE = {"payouts": "shop.gateway.payout", "nightly": "shop.gateway.settle_nightly"}
