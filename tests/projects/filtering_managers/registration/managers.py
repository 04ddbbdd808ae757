"""Managers whose every query names the merge state: a row found through one is still pending."""

from django.db import models


class PendingManager(models.Manager):
    def get_queryset(self):
        return super().get_queryset().filter(merge_status="pending")


class LiveManager(models.Manager):
    def get_queryset(self):
        return super().get_queryset().filter(is_removed=False)
