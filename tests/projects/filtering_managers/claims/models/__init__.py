"""A models package: its relative import names a module inside the package."""

from django.db import models

from .managers import OpenClaimManager


class OpenClaim(models.Model):
    state = models.CharField(max_length=10)
    objects = OpenClaimManager()
