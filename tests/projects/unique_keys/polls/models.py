"""Models in their own module: some keep a key unique, one declares none."""

from django.db import models
from django.db.models import Q
from django.db.models.functions import Lower


class Vote(models.Model):
    user = models.ForeignKey("auth.User", on_delete=models.CASCADE)
    choice = models.CharField(max_length=40)


class Enrolment(models.Model):
    learner = models.ForeignKey("auth.User", on_delete=models.CASCADE)
    course = models.CharField(max_length=40)

    class Meta:
        unique_together = ("learner", "course")


class Receipt(models.Model):
    reference = models.CharField(max_length=40, unique=True)


class Contact(models.Model):
    """Unique by (lower-cased email, org) among contacts that have an email: two inserts of one
    email clash, whatever its case."""

    email = models.CharField(max_length=200, blank=True, null=True)
    org = models.CharField(max_length=40)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                Lower("email"),
                "org",
                name="unique_contact_email_per_org",
                condition=Q(email__isnull=False),
            ),
        ]


class Calendar(models.Model):
    """One default calendar per org: a new calendar that is not the default clashes with none."""

    org = models.CharField(max_length=40)
    is_default = models.BooleanField(default=False)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["org"], condition=Q(is_default=True), name="one_default_calendar"),
        ]
