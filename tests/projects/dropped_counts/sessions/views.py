"""Callers of the data layer: one acts after a helper that dropped its count (a duplicate
request mails again), its twins do not act, or branch on a count that is returned."""

from shop.mail import send_receipt
from sessions.counted import close_session_checked
from sessions.store import close_session, expire_session


def checkout(request, session_id):
    close_session(session_id)  # expect: IDM102 "close_session() runs an update conditional on status (at sessions/store.py:10) and drops its affected-row count; send_receipt() on line 11 then acts for a duplicate too"
    send_receipt(request.user.email, session_id)


def leave(request, session_id):
    expire_session(session_id)  # ok: IDM102 nothing after it acts
    return None


def checkout_once(request, session_id):
    if not close_session_checked(session_id):
        return None  # a duplicate
    send_receipt(request.user.email, session_id)
    return None
