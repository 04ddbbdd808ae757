"""Check-then-insert on models another module defines: the project index knows their keys."""

import uuid

from django.db.models import Q

from polls.models import Calendar, Contact, Enrolment, Receipt, Vote


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


# A record decided on, then linked to a row the database keeps unique: a racing duplicate that
# passed the same test fails at its insert, before it writes.
def link_enrolment(request, seat):
    defaults = {"learner": request.user, "course": seat.course}
    if not seat.enrolment:
        seat.enrolment = Enrolment.objects.create(**defaults)  # ok: IDM101 the insert is kept unique: a duplicate fails there
        seat.save()


def link_vote(request, seat):
    if not seat.vote:
        seat.vote = Vote.objects.create(user=request.user, choice=seat.choice)  # expect: IDM101 "seat.vote = ... (saved later) is decided by seat.vote"
        seat.save()


def link_enrolment_by_learner_only(request, seat):
    if not seat.enrolment:
        seat.enrolment = Enrolment.objects.create(learner=request.user)  # expect: IDM101 the course is not given: the key is not kept
        seat.save()


def enrol_then_mark(request, seat):
    if seat.state != "open":
        return None
    Enrolment.objects.create(learner=request.user, course=seat.course)
    seat.state = "taken"  # ok: IDM101 the unique insert before it stops a racing duplicate
    seat.save()
    return seat


def pay_with_a_new_receipt(request, seat):
    if seat.state != "open":
        return None
    Receipt.objects.create(reference=uuid.uuid4().hex)
    seat.state = "paid"  # expect: IDM101 "is decided by seat.state" a new reference each run: the key stops no duplicate
    seat.save()
    return seat


def link_enrolment_when_asked(request, seat, enrol):
    if not seat.enrolment:
        seat.enrolment = Enrolment.objects.create(learner=request.user, course=seat.course) if enrol else None  # expect: IDM101 only one arm inserts
        seat.save()


def add_contact(request, email):
    if Contact.objects.filter(email__iexact=email, org=request.org).exists():
        return None
    return Contact.objects.create(email=email, org=request.org)  # ok: IDM101 unique on the lower-cased email where one is given


def add_calendar(request, name):
    if Calendar.objects.filter(org=request.org).exists():
        return None
    return Calendar.objects.create(org=request.org)  # expect: IDM101 "inserts the calendar row" unique only among default calendars
