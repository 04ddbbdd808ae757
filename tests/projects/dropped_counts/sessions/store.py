"""The data layer: helpers that move a row with a conditional update and hand back nothing.

Each converges on its own (a second run finds the row already moved, and nothing after the
update acts), so none is reported here. The callers in `sessions/views.py` are judged."""

from shop.models import Seat, Session


def close_session(session_id):
    Session.objects.filter(pk=session_id, status="open").update(status="closed")  # ok: IDM102 converges; nothing here acts


def expire_session(session_id):
    Session.objects.filter(pk=session_id, status="open").update(status="expired")  # ok: IDM102 converges; nothing here acts


def reserve_seat(seat_id, user_id):
    Seat.objects.filter(pk=seat_id, holder=None).update(holder=user_id)  # expect: IDM102 "conditional on holder" the caller's user is stored only if it won

