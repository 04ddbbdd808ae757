"""A handler object's methods: one loads the account under its row lock, another tests and
writes the account it is handed. Every caller hands it an account the locking method loaded
(`AccountHandler().open_ledger(AccountHandler().get_for_update(pk))`), so the test holds;
`close_ledger` is also handed one loaded plainly, and its test may be stale."""

from django.db import transaction

from ledger.loaders import Account


class AccountHandler:
    def get_for_update(self, pk):
        return Account.objects.select_for_update().get(pk=pk)

    def open_ledger(self, account):
        status = account.status
        if status != "approved":
            return
        account.status = "open"  # ok: IDM101 every caller hands over the row it locked
        account.save(update_fields=["status"])

    def close_ledger(self, account):
        if account.status != "open":
            return
        account.status = "closed"  # expect: IDM101 "tested on line 23"
        account.save(update_fields=["status"])


def open_ledger_task(pk):
    with transaction.atomic():
        account = AccountHandler().get_for_update(pk)
        AccountHandler().open_ledger(account)


def close_ledger_task(pk):
    with transaction.atomic():
        account = AccountHandler().get_for_update(pk)
        AccountHandler().close_ledger(account)


def close_ledger_plainly(pk):
    account = Account.objects.get(pk=pk)
    AccountHandler().close_ledger(account)


class LedgerRepo:
    def get_ledger_account(self, pk):
        return Account.objects.select_for_update().get(pk=pk)


def get_ledger_account(pk):
    return Account.objects.get(pk=pk)  # the same name, no lock: a call by the name may run this one


class Auditor:
    def mark_audited(self, account):
        if account.status != "closed":
            return
        account.status = "audited"  # expect: IDM101 "tested on line 57"
        account.save(update_fields=["status"])


def audit_task(pk):
    with transaction.atomic():
        account = LedgerRepo().get_ledger_account(pk)
        Auditor().mark_audited(account)
