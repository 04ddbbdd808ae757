from shop.tasks import send_receipts


def checkout(request, order):
    send_receipts.delay(order.id)
    return order
