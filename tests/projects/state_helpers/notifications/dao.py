"""Helpers that set a notification's state and save it, given the instance by their caller: a
call to one writes the caller's instance as `notification.status = ...; save()` would."""

from notifications.models import Notification


def mark_sending(notification, provider):
    notification.status = "sending"  # expect: IDM103 "sets status to 'sending' with no precondition" on every call
    notification.sent_by = provider
    notification.save()


def set_status(notification, status):
    notification.status = status  # the value is the caller's: judged where it is called
    notification.save(update_fields=["status"])


def mark_sending_if_created(notification, provider):
    if notification.status != "created":
        return
    notification.status = "sending"  # expect: IDM101 "decided by notification.status (passed in, loaded by a caller)" and not IDM103: it tests the state
    notification.save()


def reload_and_mark_delivered(notification):
    notification = Notification.objects.get(pk=notification.pk)
    notification.status = "delivered"  # expect: IDM103 "sets status to 'delivered'" a row it loads itself
    notification.save()
