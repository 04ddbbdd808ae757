from django.db import models


class OpenClaimManager(models.Manager):
    def get_queryset(self):
        return super().get_queryset().filter(state="open")
