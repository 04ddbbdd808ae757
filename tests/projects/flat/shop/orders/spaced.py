from shop.orders.claims import claim
from shop.orders.models import Order


def seen(order, mailer):
    claim (order.id)  # expect: IDM102 "returns the affected-row count of an"
    Order.objects.filter(pk=order.id).update(note="seen")
    mailer.send(order.id)
