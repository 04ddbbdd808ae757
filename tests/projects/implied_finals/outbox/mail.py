"""One final state (SENT): the send gives up on it and no guarded move leaves it."""

from outbox.models import QueuedMail
from outbox.states import MailState


class AlreadySent(Exception):
    pass


def resend(mail_id, backend):
    mail = QueuedMail.objects.get(pk=mail_id)
    if mail.state == MailState.SENT:
        raise AlreadySent(mail_id)
    claimed = QueuedMail.objects.filter(pk=mail_id, state=MailState.DRAFT).update(state=MailState.SENDING)
    if claimed:
        backend.deliver(mail)


def release_stuck():
    QueuedMail.objects.filter(state=MailState.SENDING).update(state=MailState.DRAFT)


def mark_sent(mail_id):
    mail = QueuedMail.objects.get(pk=mail_id)
    mail.state = MailState.SENT  # ok: IDM103 the project's only final state: a sent mail stays sent, any other moves on
    mail.save()


def mark_failed(mail_id):
    mail = QueuedMail.objects.get(pk=mail_id)
    mail.state = MailState.DRAFT  # expect: IDM103 "sets state to MailState.DRAFT with no precondition"
    mail.save()
