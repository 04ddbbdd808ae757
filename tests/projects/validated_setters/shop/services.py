"""The project's one way to move an order: a setter handed the order and the state asked for.
`update_order_status` re-reads the state under a row lock, copies it to the order (a refresh,
not a write) and refuses a move its table does not allow, inside its `try:`: its callers need
no precondition of their own. `change_status` tests only the state it is asked for, and
`reset_status` refreshes the order, then writes with no test: their callers move orders back."""

from django.db import transaction

from shop.models import Order, OrderStatus


class InvalidTransition(Exception):
    pass


ALLOWED = {
    OrderStatus.PENDING: [OrderStatus.PROCESSING],
    OrderStatus.PROCESSING: [OrderStatus.SHIPPED],
    OrderStatus.SHIPPED: [OrderStatus.DELIVERED],
}


class OrderService:
    @classmethod
    @transaction.atomic
    def update_order_status(cls, order, new_status):
        try:
            if not new_status:
                raise ValueError("no status")
            current = Order.objects.select_for_update().values_list("status", flat=True).get(pk=order.pk)
            order.status = current
            if order.status == new_status:
                return order
            if new_status not in ALLOWED.get(order.status, []):
                raise InvalidTransition(order.status, new_status)
            order.status = new_status
            order.save(update_fields=["status"])
            return order
        except InvalidTransition:
            raise

    @classmethod
    def change_status(cls, order, new_status):
        if not new_status:
            raise ValueError("no status")
        order.status = new_status
        order.save(update_fields=["status"])
        return order

    @classmethod
    @transaction.atomic
    def reset_status(cls, order, new_status):
        current = Order.objects.select_for_update().values_list("status", flat=True).get(pk=order.pk)
        order.status = current
        order.status = new_status
        order.save(update_fields=["status"])
        return order



class RefundDesk:
    @classmethod
    def update_status(cls, status, refund_id):
        from shop.models import Refund

        Refund.objects.filter(pk=refund_id).update(status=status)
