"""Models in their own module: one keeps (learner, course) unique, the other declares no key."""

from django.db import models


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
