"""The same decision on versioned and unversioned rows."""

from billing.legacy import Voucher
from billing.models import Invoice, Plugin, Receipt


def pay_invoice(request, invoice_id, gateway):
    invoice = Invoice.objects.get(pk=invoice_id)
    if invoice.paid:
        return None
    invoice.paid = True  # ok: IDM101 save() compares the version read: a second request's save fails
    invoice.save()
    return gateway.capture(invoice_id)


def pay_receipt(request, receipt_id, gateway):
    receipt = Receipt.objects.get(pk=receipt_id)
    if receipt.paid:
        return None
    receipt.paid = True  # expect: IDM101 "receipt.paid = ... (saved later) is decided by paid"
    receipt.save()
    return gateway.capture(receipt_id)


def enable_plugin(request, plugin_id, installer):
    plugin = Plugin.objects.get(pk=plugin_id)
    if plugin.enabled:
        return None
    plugin.enabled = True  # expect: IDM101 "plugin.enabled = ... (saved later) is decided by enabled" a release number locks nothing
    plugin.save()
    return installer.install(plugin_id)


def redeem_voucher(request, voucher_id, gateway):
    voucher = Voucher.objects.get(pk=voucher_id)
    if voucher.redeemed:
        return None
    voucher.redeemed = True  # expect: IDM101 "voucher.redeemed = ... (saved later) is decided by redeemed" another Voucher class has no version
    voucher.save()
    return gateway.credit(voucher_id)
