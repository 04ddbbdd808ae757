from shop.orders.models import Order


def claim(order_id):
    return Order.objects.filter(pk=order_id, status="pending").update(status="paid")
