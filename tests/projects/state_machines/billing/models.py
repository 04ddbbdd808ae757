from django.db import models
from django_fsm import FSMField, transition


class Intent(models.Model):
    state = models.CharField(max_length=20)
    last_error = models.TextField()


class Room(models.Model):
    status = models.CharField(max_length=20)


class Ticket(models.Model):
    state = FSMField(default="new")

    @transition(field=state, source="new", target="open")
    def open(self):
        pass

    @transition(field=state, source=["new", "open"], target="closed")
    def close(self):
        pass
