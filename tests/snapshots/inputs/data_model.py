"""Snapshot input for the data-model rules, IDM1xx: each rule once."""

from django.db import transaction
from django.utils import timezone
from shop.mail import send_receipt
from shop.models import Order, Shipment


def payment_captured(order_id):
    order = Order.objects.get(pk=order_id)
    if order.status != "pending":
        return
    order.status = "paid"
    order.save()
    send_receipt(order)


def relay_outbox_message(conn, message_id, publish):
    with conn.cursor() as cur:
        cur.execute("UPDATE outbox SET processed = true WHERE id = %s AND processed = false", (message_id,))
    conn.commit()
    publish(message_id)


def shipment_delivered(shipment_id):
    with transaction.atomic():
        Shipment.objects.filter(pk=shipment_id).update(state="delivered", delivered_at=timezone.now())
