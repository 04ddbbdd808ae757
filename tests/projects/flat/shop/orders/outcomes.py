"""Outcome records other modules call from their failure handlers."""

from shop.orders.models import Order


def close_out(order_id):
    return Order.objects.filter(pk=order_id, status="pending").update(status="declined")


def hold(order_id):
    return Order.objects.filter(pk=order_id, status="pending").update(status="payment_pending")
