"""Helpers that load an account for its callers: some under a row lock that outlives them (the
caller's transaction holds it), some not. A caller's test of what a locking helper returned is
made under the lock; of what the others returned, it may be stale."""

from django.db import models, transaction
from sqlalchemy import select


class Account(models.Model):
    status = models.CharField(max_length=20)


def load_for_update(pk):
    return Account.objects.select_for_update().get(pk=pk)


def load_first_for_update(pk):
    account = Account.objects.select_for_update().filter(pk=pk).first()
    return account


def load_through(pk):
    return load_for_update(pk)


def load_plain(pk):
    return Account.objects.get(pk=pk)


def load_in_its_own_transaction(pk):
    with transaction.atomic():
        return Account.objects.select_for_update().get(pk=pk)


def load_shared(pk):
    return Account.objects.select_for_update(read=True).get(pk=pk)


class Ledger:
    @classmethod
    def _get_for_update(cls, pk):
        try:
            return Account.objects.select_for_update().get(pk=pk)
        except Account.DoesNotExist:
            return None

    @classmethod
    @transaction.atomic
    def close(cls, pk):
        account = cls._get_for_update(pk)
        if account is None or account.status != "open":
            return
        account.status = "closed"  # ok: IDM101 the helper loaded the account under a row lock
        account.save()


_cache = {}


def load_cached(pk):
    if (cached := _cache.get(pk)) is not None:
        return cached
    return Account.objects.select_for_update().get(pk=pk)


def load_or_given(pk, account=None):
    if account is None:
        account = Account.objects.select_for_update().get(pk=pk)
    return account


def load_after_its_block(pk):
    with transaction.atomic():
        account = Account.objects.select_for_update().get(pk=pk)
    return account


@transaction.atomic
def load_in_its_decorated_transaction(pk):
    return Account.objects.select_for_update().get(pk=pk)


def load_the_parent(pk):
    return Account.objects.select_for_update().get(pk=pk).get_parent()


class AccountRepository:
    def get(self, pk):
        return Account.objects.select_for_update().get(pk=pk)


class AccountView:
    def __init__(self, id, status):
        self.id = id
        self.status = status


def load_view_for_update(session, pk):
    """A copy of the row, read under the row lock its statement takes (the caller's transaction keeps it)."""
    row = session.execute(select(Account).where(Account.id == pk).with_for_update()).scalars().first()
    return AccountView(id=row.id, status=row.status) if row else None


def load_view(session, pk):
    row = session.execute(select(Account).where(Account.id == pk)).scalars().first()
    return AccountView(id=row.id, status=row.status) if row else None
