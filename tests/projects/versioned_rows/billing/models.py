"""A Django model whose saves compare a version field (django-concurrency); one without; one
whose `VersionField` stores a release number (semantic-version), not a lock."""

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
