"""Two models named Voucher, in two modules: one compares a version field, the other does not.
Models are known by their class name, so neither is taken as versioned."""

from concurrency.fields import IntegerVersionField
from django.db import models


class Voucher(models.Model):
    redeemed = models.BooleanField(default=False)


class Archive:
    class Voucher(models.Model):
        redeemed = models.BooleanField(default=False)
        version = IntegerVersionField()
