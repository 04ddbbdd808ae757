"""A processing queue: each upload request makes a row, and the work it starts writes its status."""

from django.db import models


class Status(models.IntegerChoices):
    ENQUEUED = 1
    IN_PROGRESS = 2
    SUCCESSFUL = 3
    FAILED = 4


class Upload(models.Model):
    status = models.IntegerField(choices=Status.choices, default=Status.ENQUEUED)
    kind = models.IntegerField()


class Crawl(models.Model):
    status = models.IntegerField(choices=Status.choices, default=Status.ENQUEUED)


class Feed(models.Model):
    status = models.IntegerField(choices=Status.choices, default=Status.ENQUEUED)


class Account(models.Model):
    plan_status = models.CharField(max_length=10)


class Payment(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE)
