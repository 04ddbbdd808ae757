"""A state the project gives up on but also leaves by a guarded move (PAID, then REFUNDED) is
not final: a late write of it moves a refunded invoice back."""

from outbox.models import Invoice
from outbox.states import InvoiceStatus


def pay(invoice_id, gateway):
    invoice = Invoice.objects.get(pk=invoice_id)
    if invoice.status == InvoiceStatus.PAID:
        return
    gateway.charge(invoice)


def refund(invoice_id):
    invoice = Invoice.objects.select_for_update().get(pk=invoice_id)
    if invoice.status == InvoiceStatus.PAID:
        invoice.status = InvoiceStatus.REFUNDED
        invoice.save()


def on_paid_webhook(invoice_id):
    invoice = Invoice.objects.get(pk=invoice_id)
    invoice.status = InvoiceStatus.PAID  # expect: IDM103 "sets status to InvoiceStatus.PAID with no precondition"
    invoice.save()
