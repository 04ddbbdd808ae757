import requests
from django.db import transaction

from shop.ledger import book
from shop.mail import notify_customer, send_receipt_once, validate_email
from shop.models import Export, Import, ManifestAccessor, ManifestState, ManifestStep, Order, OrderStatus, Payout, Pipeline, Refund, RefundStatus, Shipment, StepStatus
from shop.services import OrderService, RefundDesk


def on_shipped(order_id):
    order = Order.objects.get(pk=order_id)
    OrderService.update_order_status(order, OrderStatus.SHIPPED)  # ok: IDM103 the setter checks the move under a lock


def on_processing(order_id):
    order = Order.objects.get(pk=order_id)
    OrderService.change_status(order, OrderStatus.PROCESSING)  # expect: IDM103 "sets status to OrderStatus.PROCESSING with no precondition"


def on_reprocessing(order_id):
    order = Order.objects.get(pk=order_id)
    OrderService.reset_status(order, OrderStatus.PROCESSING)  # expect: IDM103 "sets status to OrderStatus.PROCESSING with no precondition"


def on_refund_accepted(refund_id):
    refund = Refund.objects.get(pk=refund_id)
    refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM103 the refund refuses a move its table does not allow


def on_payout_sent(payout_id):
    payout = Payout.objects.get(pk=payout_id)
    payout.set_state("sent")  # expect: IDM103 "sets state to 'sent' with no precondition"


def on_refund_declined(refund_id):
    refund = Refund.objects.get(pk=refund_id)
    if refund.status != RefundStatus.REQUESTED:
        raise ValueError("the refund was decided already")
    # the refund's own check reads the same stale copy: two declines both pass and both notify
    refund.set_status(RefundStatus.REJECTED, "declined by the shop")  # expect: IDM101 "refund.set_status(...) is decided by status read on line 36 without a lock"
    notify_customer(refund)


def on_refund_declined_locked(refund_id):
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        if refund.status != RefundStatus.REQUESTED:
            raise ValueError("the refund was decided already")
        refund.set_status(RefundStatus.REJECTED, "declined by the shop")  # ok: IDM101 read under a row lock
        notify_customer(refund)


def on_export_done(export_id):
    export = Export.objects.get(pk=export_id)
    export.set_progress_status("finished")  # ok: IDM103 no definition of set_progress_status in the project writes a state


def on_import_done(import_id):
    job = Import.objects.get(pk=import_id)
    job.mark_status("finished")  # expect: IDM103 "sets status to 'finished' with no precondition"


def on_refund_paid_out(refund_id):
    refund = Refund.objects.get(pk=refund_id)
    # the refund returns as if it moved when it is accepted already: a second delivery notifies again
    refund.set_status(RefundStatus.ACCEPTED)  # expect: IDM102 "returns as if done when refund is RefundStatus.ACCEPTED already, so notify_customer() on line 67 acts again"
    notify_customer(refund)


def on_refund_paid_out_once(refund_id):
    refund = Refund.objects.get(pk=refund_id)
    if refund.status == RefundStatus.ACCEPTED:
        return
    refund.set_status(RefundStatus.ACCEPTED)  # expect: IDM101 "decided by status read on line"
    notify_customer(refund)


def on_payout_sent_again(payout_id):
    payout = Payout.objects.get(pk=payout_id)
    payout.set_state("sent")  # expect: IDM103 "sets state to 'sent' with no precondition"
    notify_customer(payout)


def on_refund_paid_out_locked(refund_id):
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        if refund.status == RefundStatus.ACCEPTED:
            return  # a repeat, turned away here under the row lock
        refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM102, IDM101 the caller refuses a repeat first
        notify_customer(refund)


def on_refund_found_requested(refund_id):
    refund = Refund.objects.get(pk=refund_id, status=RefundStatus.REQUESTED)  # a repeat finds none
    refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM102 found only in the state it leaves
    notify_customer(refund)


def on_refund_moved_twice(refund_id):
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM102 what follows is another guarded move of it
        refund.set_status(RefundStatus.REJECTED)


def on_refund_reopened(refund_id):
    # the state first, then the record's id: a service's write on that refund, not on the desk
    RefundDesk.update_status(RefundStatus.REQUESTED, refund_id)  # expect: IDM103 "sets status to RefundStatus.REQUESTED with no precondition"


def on_refund_checked(refund_id):
    refund = Refund.objects.get(pk=refund_id)
    refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM102 what follows only computes, whatever its name holds
    return validate_email(refund)


def on_payout_settled_by(payout_id, clerk):
    with transaction.atomic():
        payout = Payout.objects.select_for_update().get(pk=payout_id)
        if payout.state != "pending":
            return
        # the state first, then who moved it: the move of the payout this function loaded and tested
        payout.set_state("settled", clerk)  # ok: IDM103 tested under the row lock first


def on_payout_reset_by(payout_id, clerk):
    payout = Payout.objects.get(pk=payout_id)
    payout.set_state("pending", clerk)  # expect: IDM103 "payout.set_state(...) sets state to 'pending' with no precondition"


def on_refund_paid_out_unless_rejected(refund_id):
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        if refund.status == RefundStatus.REJECTED:
            return  # turns away a rejected refund, not a repeat: a duplicate finds it accepted
        refund.set_status(RefundStatus.ACCEPTED)  # expect: IDM102 "so notify_customer() on line 137 acts again"
        notify_customer(refund)


def on_refund_receipted(refund_id):
    refund = Refund.objects.get(pk=refund_id)
    refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM102 the project declares the receipt safe to repeat
    send_receipt_once(refund)


def on_refund_booked(refund_id):
    refund = Refund.objects.get(pk=refund_id)
    refund.set_status(RefundStatus.ACCEPTED)  # expect: IDM102 "so book() on line 149 acts again"
    book(refund)


def on_refund_mailed(refund_id, server):
    refund = Refund.objects.get(pk=refund_id)
    refund.set_status(RefundStatus.ACCEPTED)  # expect: IDM102 "so sendmail() on line 155 acts again"
    server.sendmail("shop@example.com", ["customer@example.com"], "refund accepted")


def on_refund_told_after_commit(refund_id):
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        refund.set_status(RefundStatus.ACCEPTED)  # expect: IDM102 "so on_commit() on line 162 acts again"
        transaction.on_commit(lambda: notify_customer(refund))


def on_refund_checked_after_commit(refund_id):
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM102 what runs after the commit only computes
        transaction.on_commit(lambda: validate_email(refund))


def on_refund_paid_out_else(refund_id):
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        if refund.status == RefundStatus.ACCEPTED:
            print("duplicate delivery, ignored")
        else:
            refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM102 a repeat takes the other branch
            notify_customer(refund)


def on_refund_paid_out_spelt_as_text(refund_id):
    with transaction.atomic():
        refund = Refund.objects.select_for_update().get(pk=refund_id)
        if refund.status == "accepted":
            return  # the member's value, spelt out: the same state
        refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM102 the repeat is turned away above
        notify_customer(refund)


def on_refund_synced(refund_id):
    refund = Refund.objects.get(pk=refund_id)
    refund.set_status(RefundStatus.ACCEPTED)  # ok: IDM102 a PUT of the same state leaves what the first left
    requests.put(f"https://crm.example/refunds/{refund.pk}", json={"status": "accepted"}, timeout=10)


def on_refund_line_shipped(refund_id, line_id):
    refund = Refund.objects.get(pk=refund_id)
    if refund.status != RefundStatus.ACCEPTED:
        return
    # the state first, then another record's key: that line's move, not the refund's, which the
    # test above says nothing of
    # ok: IDM101 the refund's status is not what it writes
    refund.update_line_status(RefundStatus.ACCEPTED, line_id)  # expect: IDM103 "refund.update_line_status(..., ...) sets status"


def on_refund_announced(refund_id, topic):
    refund = Refund.objects.get(pk=refund_id)
    # an acronym first, then the act: a publish all the same
    refund.set_status(RefundStatus.ACCEPTED)  # expect: IDM102 "so SNSPublish() on line 211 acts again"
    topic.SNSPublish(refund.pk)


def on_download_started(manifest_id):
    ManifestAccessor().update_manifest_state(ManifestStep.DOWNLOAD, ManifestState.START, manifest_id)  # ok: IDM103 the setter writes an entry of a document, no state


def on_summary_stage(manifest_id):
    ManifestAccessor().update_manifest_stage(ManifestStep.SUMMARY, manifest_id)  # expect: IDM103 "sets stage to ManifestStep.SUMMARY with no precondition"


def on_step_running(pipeline_id, step):
    pipeline = Pipeline.objects.get(pk=pipeline_id)
    pipeline.set_step_status(step, StepStatus.RUNNING)  # expect: IDM103 "sets status to StepStatus.RUNNING with no precondition"


def on_shipped_logged(shipment_id):
    shipment = Shipment.objects.get(pk=shipment_id)
    shipment.set_shipment_status(OrderStatus.SHIPPED)  # expect: IDM103 "sets status to OrderStatus.SHIPPED with no precondition"
