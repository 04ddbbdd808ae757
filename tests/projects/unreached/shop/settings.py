SCHEDULE = {"payouts": "shop.gateway.payout"}
