"""A Django model whose saves compare a version field (django-concurrency); one without; one
whose `VersionField` stores a release number (semantic-version), not a lock; unique keys kept
among live rows, among active rows, and wherever the key is set."""

from concurrency.fields import IntegerVersionField
from django.db import models
from semantic_version.django_fields import VersionField


class Invoice(models.Model):
    paid = models.BooleanField(default=False)
    version = IntegerVersionField()


class Receipt(models.Model):
    paid = models.BooleanField(default=False)


class Plugin(models.Model):
    enabled = models.BooleanField(default=False)
    version = VersionField()


class Membership(models.Model):
    project = models.CharField(max_length=40)
    member = models.CharField(max_length=40)
    deleted_at = models.DateTimeField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["project", "member"], condition=models.Q(deleted_at__isnull=True), name="live_member"
            ),
        ]


class Seat(models.Model):
    project = models.CharField(max_length=40)
    member = models.CharField(max_length=40)
    status = models.CharField(max_length=16)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["project", "member"], condition=models.Q(status="active"), name="one_seat"),
        ]


class BugShim(models.Model):
    bugzilla_id = models.PositiveIntegerField(null=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["bugzilla_id"], condition=models.Q(bugzilla_id__isnull=False), name="unique_bug"
            ),
        ]
