"""The callers: a check-then-send that marks the row through a helper, and twins that lock the
row, hand over a fresh instance, or pass a row a state filter chose."""

from django.db import transaction

from notifications import provider
from notifications.dao import mark_sending, mark_sending_if_created, reload_and_mark_delivered, set_status
from notifications.models import Notification


def deliver(notification_id):
    notification = Notification.objects.get(pk=notification_id)
    if notification.status == "created":
        provider.send_sms(notification.to, notification.body)
        mark_sending(notification, "mmg")  # expect: IDM101 "mark_sending(notification, ...) is decided by status read on line 12 without a lock"


def deliver_locked(notification_id):
    with transaction.atomic():
        notification = Notification.objects.select_for_update().get(pk=notification_id)
        if notification.status == "created":
            provider.send_sms(notification.to, notification.body)
            mark_sending(notification, "mmg")  # ok: IDM101 the row is locked until the write commits


def record_delivery_receipt(notification_id):
    notification = Notification.objects.get(pk=notification_id)
    set_status(notification, "delivered")  # expect: IDM103 "set_status(notification, ...) sets status to 'delivered' with no precondition"


def record_receipt_of_sent(notification_id):
    notification = Notification.objects.get(pk=notification_id, status="sending")
    set_status(notification, "delivered")  # ok: IDM103 the query names the state it accepts


def queue(to, body):
    notification = Notification(to=to, body=body)
    set_status(notification, "created")  # ok: IDM103 a fresh instance: an insert, nothing to overwrite
    return notification


def deliver_guarded(notification_id):
    notification = Notification.objects.get(pk=notification_id)
    mark_sending_if_created(notification, "mmg")  # ok: IDM101 the helper decides and writes; no decision here
    reload_and_mark_delivered(notification)


class Retrier:
    """A method given the instance, not its own: the write is the argument's."""

    def _requeue(self, notification):
        notification.status = "created"  # expect: IDM103 "sets status to 'created' with no precondition"
        notification.save()

    def requeue_failed(self, notification_id):
        notification = Notification.objects.get(pk=notification_id)
        if notification.status == "failed":
            self._requeue(notification)  # expect: IDM101 "self._requeue(notification) is decided by status read on line 56"


def requeue_batch(notification_id, extra):
    notification = Notification.objects.get(pk=notification_id)
    if notification.status == "failed":
        set_status(*extra, notification)  # ok: IDM101 the starred argument may fill the instance's slot
