from shop.models import Order, OrderStatus
from shop.services import OrderService


def on_shipped(order_id):
    order = Order.objects.get(pk=order_id)
    OrderService.update_order_status(order, OrderStatus.SHIPPED)  # ok: IDM103 the setter checks the move under a lock


def on_processing(order_id):
    order = Order.objects.get(pk=order_id)
    OrderService.change_status(order, OrderStatus.PROCESSING)  # expect: IDM103 "sets status to OrderStatus.PROCESSING with no precondition"


def on_reprocessing(order_id):
    order = Order.objects.get(pk=order_id)
    OrderService.reset_status(order, OrderStatus.PROCESSING)  # expect: IDM103 "sets status to OrderStatus.PROCESSING with no precondition"
