"""Change requests handed to their transition by a query that chose them by state: a manager
method (or a helper calling one) that returns only rows a state filter chose holds the
precondition for each caller, as a loop over the filter does. A helper choosing by no state,
or a name bound again after the query, holds none."""

from django.db import models


class RequestState(models.IntegerChoices):
    PENDING = 1
    APPROVED = 2
    REFUSED = 3
    LAPSED = 4
    ACTIVE = 5
    SURRENDERED = 6


class RequestManager(models.Manager):
    def pending_for(self, barrier):
        return self.get(barrier=barrier, state=RequestState.PENDING)

    def active_for(self, barrier):
        return self.filter(barrier=barrier, state__in=[RequestState.ACTIVE]).first()

    def open_for(self, barrier):
        try:
            return self.pending_for(barrier)
        except self.model.DoesNotExist:
            return self.active_for(barrier)

    def latest_for(self, barrier):
        return self.filter(barrier=barrier).order_by("-pk").first()


class ChangeRequest(models.Model):
    state = models.IntegerField(choices=RequestState.choices)
    objects = RequestManager()

    def approve(self):
        self.state = RequestState.APPROVED  # ok: IDM103 its caller holds a request a manager chose by state
        self.save()

    def refuse(self):
        self.state = RequestState.REFUSED  # ok: IDM103 chosen by a helper that returns what two such helpers do
        self.save()

    def surrender(self):
        self.state = RequestState.SURRENDERED  # ok: IDM103 chosen by its caller's own query on the state
        self.save()

    def lapse(self):
        self.state = RequestState.LAPSED  # expect: IDM103 "sets state to RequestState.LAPSED with no precondition"
        self.save()

    def reopen(self):
        self.state = RequestState.PENDING  # expect: IDM103 "sets state to RequestState.PENDING with no precondition"
        self.save()


class Waiver(models.Model):
    """Another model with an `approve` of its own: a caller's record of this class runs this
    one, which no state filter chose. ChangeRequest's `approve` is judged by its own callers."""

    state = models.IntegerField(choices=RequestState.choices)

    def approve(self):
        self.state = RequestState.APPROVED  # expect: IDM103 "sets state to RequestState.APPROVED with no precondition"
        self.save()
