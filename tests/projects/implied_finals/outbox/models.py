from django.db import models


class QueuedMail(models.Model):
    state = models.CharField(max_length=20)


class Export(models.Model):
    status = models.CharField(max_length=20)


class Invoice(models.Model):
    status = models.CharField(max_length=20)
