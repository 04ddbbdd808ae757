from shop.orders.claims import claim as grab


def grab_it(order, mailer):
    grab(order.id)  # expect: IDM102 "returns the affected-row count of an"
    mailer.send(order.id)
