"""A loader that hands a locked query to the project's getter (`get_account(pk,
base_queryset=Account.objects.select_for_update())`) returns a row of that query, locked; so
does its answer cast to a type that names it. A getter handed a plain query, or a locked one
given to a function that is no getter, returns nothing locked."""

from typing import NewType, cast

from django.db import transaction

from ledger.loaders import Account

AccountForUpdate = NewType("AccountForUpdate", Account)


def get_account(pk, base_queryset=None):
    queryset = base_queryset if base_queryset is not None else Account.objects.all()
    return queryset.get(pk=pk)


def get_account_for_update(pk):
    return cast(AccountForUpdate, get_account(pk, base_queryset=Account.objects.select_for_update()))


def get_account_plainly(pk):
    return get_account(pk, base_queryset=Account.objects.filter(status="open"))


def count_then_load(pk):
    return audit_rows(Account.objects.select_for_update(), pk)


def audit_rows(queryset, pk):
    return queryset.filter(pk=pk).first()


@transaction.atomic
def freeze_account(pk):
    account = get_account_for_update(pk)
    if account.status != "open":
        return
    account.status = "frozen"  # ok: IDM101 the getter was handed a locked query
    account.save(update_fields=["status"])


@transaction.atomic
def thaw_account(pk):
    account = get_account_plainly(pk)
    if account.status != "frozen":
        return
    account.status = "open"  # expect: IDM101 "tested on line 48"
    account.save(update_fields=["status"])


@transaction.atomic
def audit_account(pk):
    account = count_then_load(pk)
    if account.status != "frozen":
        return
    account.status = "audited"  # expect: IDM101 "tested on line 57"
    account.save(update_fields=["status"])
