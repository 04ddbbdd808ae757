"""Model methods that write a state with no test of their own: where every caller locks the
row or hands over rows a state filter chose, the precondition is the callers'. An unlocked test
in the caller is not one: another writer may come between it and the write."""

from django.db import models


class ReviewState(models.IntegerChoices):
    SUBMITTED = 1
    ACCEPTED = 2
    REJECTED = 3
    WITHDRAWN = 4
    ARCHIVED = 5


class Abstract(models.Model):
    state = models.IntegerField(choices=ReviewState.choices)

    def accept(self):
        self.state = ReviewState.ACCEPTED  # expect: IDM103 "sets state to ReviewState.ACCEPTED" its caller's test is unlocked
        self.save()

    def withdraw(self):
        self.state = ReviewState.WITHDRAWN  # ok: IDM103 called only for rows a state filter chose
        self.save()

    def reject(self):
        self.state = ReviewState.REJECTED  # ok: IDM103 called only under the caller's row lock
        self.save()

    def resubmit(self):
        self.state = ReviewState.SUBMITTED  # expect: IDM103 "sets state to ReviewState.SUBMITTED with no precondition"
        self.save()

    def archive(self):
        self.state = ReviewState.ARCHIVED  # expect: IDM103 "sets state to ReviewState.ARCHIVED with no precondition"
        self.save()

    def close(self):
        self.state = ReviewState.ARCHIVED  # ok: IDM103 its one caller holds the row lock and checks the state
        self.save()

    def confirm(self):
        if self.state != ReviewState.ACCEPTED:
            return
        self.state = ReviewState.ARCHIVED  # ok: IDM101 every caller holds the row lock: the test is not stale
        self.save()

    def expire(self):
        if self.state != ReviewState.SUBMITTED:
            return
        self.state = ReviewState.WITHDRAWN  # expect: IDM101 "tested on line" a filter chose the rows, unlocked
        self.save()
