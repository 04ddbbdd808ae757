"""A model method that adds to its own column and saves: the row is whoever loaded it."""

from django.db import models


class Wallet(models.Model):
    balance = models.IntegerField(default=0)

    def deposit(self, amount):
        self.balance += amount  # ok: IDM101 the row is the caller's: reported where it was loaded
        self.save()
