"""Webhook receivers that log each delivery on a row of their own, made before anything can
fail (bound to `None` first, for the handler's sake), and the twin that finds a stored row."""

from uploads.models import Delivery, Inbox


def receive(request):
    delivery = None
    try:
        delivery = Delivery.objects.create()
        handle(request)
        delivery.mark_handled()
    except ValueError as exc:
        if delivery:
            delivery.mark_refused(str(exc))


def read_latest(request):
    inbox = None
    inbox = Inbox.objects.filter(owner=request.user).first()
    if inbox:
        inbox.mark_read()


def handle(request):
    return request
