from shop.orders import take_order


def take(order, mailer):
    take_order(order.id)  # expect: IDM102 "returns the affected-row count of an"
    mailer.send(order.id)


def take_once(order, mailer):
    if take_order(order.id):  # ok: IDM102 -- the count decides
        mailer.send(order.id)
