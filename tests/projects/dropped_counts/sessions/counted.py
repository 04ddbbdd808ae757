"""A helper that hands its count back: its callers are judged on reading it."""

from shop.models import Session


def close_session_checked(session_id):
    return Session.objects.filter(pk=session_id, status="open").update(status="closed")  # ok: IDM102 the count is returned
