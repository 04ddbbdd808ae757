"""The same decision on versioned and unversioned rows."""

from billing.legacy import Voucher
from billing.models import BugShim, Invoice, Membership, Plugin, Receipt, Seat


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


def join(request, project, member):
    if Membership.objects.filter(project=project, member=member, deleted_at__isnull=True).exists():
        return None
    return Membership.objects.create(project=project, member=member)  # ok: IDM101 unique among live rows, and a new row is live


def take_seat(request, project, member):
    if Seat.objects.filter(project=project, member=member).exists():
        return None
    return Seat.objects.create(project=project, member=member, status="pending")  # expect: IDM101 "inserts the seat row" unique only among active seats


def link_bug(request, bugzilla_id):
    if BugShim.objects.filter(bugzilla_id=bugzilla_id).exists():
        return None
    return BugShim.objects.create(bugzilla_id=bugzilla_id)  # ok: IDM101 unique wherever the key is set, and a null key clashes with nothing
