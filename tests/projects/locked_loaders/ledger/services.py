"""The callers: each tests the account a helper returned, then writes it."""

from django.db import transaction

from ledger.loaders import (
    load_after_its_block,
    load_cached,
    load_first_for_update,
    load_for_update,
    load_in_its_decorated_transaction,
    load_in_its_own_transaction,
    load_or_given,
    load_plain,
    load_shared,
    load_the_parent,
    load_through,
)


@transaction.atomic
def pay(pk):
    account = load_for_update(pk)
    if account.status != "open":
        return
    account.status = "paid"  # ok: IDM101 the helper loaded the account under a row lock
    account.save(update_fields=["status"])


@transaction.atomic
def refund(pk):
    account = load_first_for_update(pk)
    if account is None or account.status != "paid":
        return
    account.status = "refunded"  # ok: IDM101 the helper's name bound to a locked load
    account.save(update_fields=["status"])


@transaction.atomic
def hold(pk):
    account = load_through(pk)
    if account.status != "open":
        return
    account.status = "held"  # ok: IDM101 through a helper that returns a locking helper's row
    account.save(update_fields=["status"])


@transaction.atomic
def freeze(pk):
    account = load_plain(pk)
    if account.status != "open":
        return
    account.status = "frozen"  # expect: IDM101 "decided by account.status (loaded by the helper that returned it)"
    account.save(update_fields=["status"])


def suspend(pk):
    account = load_in_its_own_transaction(pk)
    if account.status != "open":
        return
    account.status = "suspended"  # expect: IDM101 "loaded by the helper that returned it" its lock ended with its block
    account.save(update_fields=["status"])


@transaction.atomic
def reopen(pk):
    account = load_shared(pk)
    if account.status != "closed":
        return
    account.status = "open"  # expect: IDM101 "loaded by the helper that returned it" a shared lock lets a duplicate read too
    account.save(update_fields=["status"])


def settle(pk):
    account = load_for_update(pk)
    if account.status != "paid":
        return
    transaction.commit()
    account.status = "settled"  # expect: IDM101 "loaded by the helper that returned it" the commit ended the lock
    account.save(update_fields=["status"])


@transaction.atomic
def close_cached(pk):
    account = load_cached(pk)
    if account.status != "open":
        return
    account.status = "closed"  # expect: IDM101 "loaded by the helper that returned it" a cached row may come back unlocked
    account.save(update_fields=["status"])


@transaction.atomic
def close_given(pk, given):
    account = load_or_given(pk, given)
    if account.status != "open":
        return
    account.status = "closed"  # expect: IDM101 "loaded by the helper that returned it" the caller's own row may come back
    account.save(update_fields=["status"])


@transaction.atomic
def close_after_block(pk):
    account = load_after_its_block(pk)
    if account.status != "open":
        return
    account.status = "closed"  # expect: IDM101 "loaded by the helper that returned it" the helper's block ended its lock
    account.save(update_fields=["status"])


def close_decorated(pk):
    account = load_in_its_decorated_transaction(pk)
    if account.status != "open":
        return
    account.status = "closed"  # expect: IDM101 "loaded by the helper that returned it" the helper's transaction ended
    account.save(update_fields=["status"])


@transaction.atomic
def close_parent(pk):
    account = load_the_parent(pk)
    if account.status != "open":
        return
    account.status = "closed"  # expect: IDM101 "loaded by the helper that returned it" the parent was never locked
    account.save(update_fields=["status"])


@transaction.atomic
def close_from_cache(pk, cache):
    account = cache.get(pk)
    if account.status != "open":
        return
    account.status = "closed"  # expect: IDM101 "loaded by the helper that returned it" a mapping's get, not the repository's
    account.save(update_fields=["status"])
