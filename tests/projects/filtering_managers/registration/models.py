from django.db import models

from registration.managers import LiveManager, PendingManager


class Household(models.Model):
    merge_status = models.CharField(max_length=10, default="pending")
    is_removed = models.BooleanField(default=False)
    objects = LiveManager()


class PendingHousehold(Household):
    objects = PendingManager()

    class Meta:
        proxy = True


class PendingDocument(models.Model):
    merge_status = models.CharField(max_length=10, default="pending")
    objects: PendingManager = PendingManager()


class Claim(models.Model):
    """billing defines a Claim too, on Django's own manager: which one a query means is unknown."""

    merge_status = models.CharField(max_length=10, default="pending")
    objects = PendingManager()
