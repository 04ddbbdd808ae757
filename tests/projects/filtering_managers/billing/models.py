"""Another app's manager and model share the names of registration's: which one a query
means is not known by name, so neither filters."""

from django.db import models


class PendingManager(models.Manager):
    def get_queryset(self):
        return super().get_queryset().select_related("customer")


class Household(models.Model):
    merge_status = models.CharField(max_length=10)


class Invoice(models.Model):
    status = models.CharField(max_length=10)
    objects = PendingManager()


class LiveInvoiceManager(models.Manager):
    def get_queryset(self):
        return super().get_queryset().exclude(status="void")


class LiveInvoice(models.Model):
    status = models.CharField(max_length=10)
    objects = LiveInvoiceManager()


class Claim(models.Model):
    merge_status = models.CharField(max_length=10)
