from django.db import models


class Notification(models.Model):
    status = models.CharField(max_length=20, default="created")
    sent_by = models.CharField(max_length=20, blank=True)
    to = models.CharField(max_length=200)
    body = models.TextField()
