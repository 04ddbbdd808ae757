from shop.orders.claims import claim


def fulfil(order, mailer):
    claim(order.id)  # expect: IDM102 "claim() returns the affected-row count of an update conditional on status (at shop/orders/claims.py:5)"
    mailer.send(order.id)


def fulfil_once(order, mailer):
    if claim(order.id):  # ok: IDM102 -- the count decides
        mailer.send(order.id)
