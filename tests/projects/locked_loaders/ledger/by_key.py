"""Callers that load an account by its key, test its state, then have the data-access module
write it by the same key: the key names the row they tested, so the test is the write's
precondition (under the loader's lock, nothing races it). The twins: a write by another key
than the tested row's, and a test made on a row loaded without a lock (a race, IDM101's)."""

from django.db import transaction

from ledger import accounts_store
from ledger.loaders import load_for_update, load_plain, load_view, load_view_for_update


@transaction.atomic
def close_account(account_id):
    account = load_for_update(account_id)
    if account.status != "open":
        raise ValueError(account.status)
    accounts_store.update_account_status(account_id=account_id, status="closed")  # ok: IDM103 tested under the loader's lock


@transaction.atomic
def close_partner(account_id, partner_id):
    account = load_for_update(account_id)
    if account.status != "open":
        raise ValueError(account.status)
    accounts_store.update_account_status(account_id=partner_id, status="closed")  # expect: IDM103 "no precondition"


def close_unlocked(account_id):
    account = load_plain(account_id)
    if account.status != "open":
        raise ValueError(account.status)
    accounts_store.update_account_status(account_id=account_id, status="closed")  # expect: IDM101 "decided by account.status"


@transaction.atomic
def close_partner_of(account_id):
    account = load_for_update(account_id)
    if account.status != "open":
        raise ValueError(account.status)
    accounts_store.update_account_status(account_id=account.partner_id, status="closed")  # expect: IDM103 "no precondition"


@transaction.atomic
def close_from_view(session, account_id):
    view = load_view_for_update(session, account_id)
    if view is None or view.status != "open":
        raise ValueError(account_id)
    accounts_store.update_account_status(account_id=view.id, status="closed")  # ok: IDM101 the copy was read under the lock


@transaction.atomic
def close_from_unlocked_view(session, account_id):
    view = load_view(session, account_id)
    if view is None or view.status != "open":
        raise ValueError(account_id)
    accounts_store.update_account_status(account_id=view.id, status="closed")  # expect: IDM101 "decided by view.status"
