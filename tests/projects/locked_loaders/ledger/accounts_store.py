"""A data-access module: it writes an account's state by the account's key, whatever the
caller tested."""

from ledger.loaders import Account


def update_account_status(account_id, status):
    Account.objects.filter(pk=account_id).update(status=status)
