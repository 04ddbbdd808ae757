from shop.gateway import Gateway

# settle_by_hand used to be called here; a comment names nothing


def pay(order):
    return Gateway().charge(order)
