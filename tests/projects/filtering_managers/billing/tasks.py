from billing.models import Invoice, LiveInvoice


def pay(pk):
    Invoice.objects.filter(pk=pk).update(status="paid")  # expect: IDM103 "no precondition" billing's PendingManager filters nothing


def pay_live(pk):
    LiveInvoice.objects.filter(pk=pk).update(status="paid")  # expect: IDM103 "no precondition" an exclude() names no state the row is in
