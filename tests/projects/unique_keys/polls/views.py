"""Check-then-insert on models another module defines: the project index knows their keys."""

from django.db.models import Q

from polls.models import Enrolment, Vote


def vote(request, choice):
    if Vote.objects.filter(user=request.user, choice=choice).exists():
        return None
    return Vote.objects.create(user=request.user, choice=choice)  # expect: IDM101 "inserts the vote row"


def enrol(request, course):
    if Enrolment.objects.filter(learner_id=request.user.id, course=course).exists():
        return None
    return Enrolment.objects.create(learner=request.user, course=course)  # ok: IDM101 unique_together in models.py


def vote_by_query(request, choice, conditions):
    if Vote.objects.filter(user=request.user).filter(conditions).exists():
        return None
    return Vote.objects.create(user=request.user, choice=choice)  # ok: IDM101 `conditions` may name a unique key


def vote_by_inline_query(request, choice):
    if Vote.objects.filter(Q(user=request.user), choice=choice).exists():
        return None
    return Vote.objects.create(user=request.user, choice=choice)  # expect: IDM101 "inserts the vote row" an inline Q is read
