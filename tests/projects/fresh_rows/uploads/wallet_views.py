"""Callers of a method in another module that adds to the row's column: loaded without a lock,
two overlapping deposits both add to the old balance."""

from django.db import transaction

from uploads.wallets import Wallet


def deposit(request, pk):
    wallet = Wallet.objects.get(pk=pk)
    wallet.deposit(int(request.POST["amount"]))  # expect: IDM101 "wallet.deposit(...) builds on wallet.balance as loaded on line"


def deposit_locked(request, pk):
    with transaction.atomic():
        wallet = Wallet.objects.select_for_update().get(pk=pk)
        wallet.deposit(5)  # ok: IDM101 the row is locked until the transaction ends
