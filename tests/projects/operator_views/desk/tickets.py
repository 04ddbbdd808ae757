"""A help desk's tickets. A state only staff set is the one they chose; a customer's or a
message's write needs a precondition."""

from django.contrib.auth.models import PermissionsMixin
from django.db import models


class Ticket(models.Model):
    status = models.CharField(max_length=20)

    def escalate(self):
        self.status = "escalated"  # ok: IDM103 only a staff view calls it
        self.save()

    def reopen(self):
        self.status = "open"  # expect: IDM103 "sets status to 'open' with no precondition"
        self.save()


class Agent(PermissionsMixin, models.Model):
    state = models.CharField(max_length=20)

    def retire(self):
        self.state = "retired"  # expect: IDM103 a model, whatever mixin it carries
        self.save()
