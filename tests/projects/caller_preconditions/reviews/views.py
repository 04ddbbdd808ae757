"""The callers: some lock the row or hand over rows a state filter chose, some only test."""

from django.db import transaction

from reviews.models import Abstract, ReviewState


class NotSubmitted(Exception):
    pass


def accept_view(request, pk):
    abstract = Abstract.objects.get(pk=pk)
    if abstract.state != ReviewState.SUBMITTED:
        raise NotSubmitted(pk)
    abstract.accept()  # expect: IDM101 "abstract.accept(...) is decided by state read on line 13 without a lock"


def withdraw_stale():
    for abstract in Abstract.objects.filter(state=ReviewState.SUBMITTED):
        abstract.withdraw()


def reject_view(request, pk):
    with transaction.atomic():
        abstract = Abstract.objects.select_for_update().get(pk=pk)
        abstract.reject()


def close_view(request, pk):
    with transaction.atomic():
        abstract = Abstract.objects.select_for_update().get(pk=pk)
        if abstract.state == ReviewState.WITHDRAWN:
            abstract.close()


def resubmit_view(request, pk):
    abstract = Abstract.objects.get(pk=pk)
    if abstract.state == ReviewState.REJECTED:
        abstract.resubmit()  # expect: IDM101 "decided by state read on line 38 without a lock"


def resubmit_api(request, pk):
    Abstract.objects.get(pk=pk).resubmit()


def archive_view(request, pk):
    abstract = Abstract.objects.get(pk=pk)
    if abstract.state == ReviewState.REJECTED:
        abstract.archive()  # expect: IDM101 "decided by state read on line 48 without a lock"


ACTIONS = {"archive": Abstract.archive}


def confirm_batch(request, pks):
    with transaction.atomic():
        chosen = Abstract.objects.filter(pk__in=pks).select_for_update()
        for abstract in chosen:
            abstract.confirm()


def expire_stale():
    for abstract in Abstract.objects.filter(state=ReviewState.SUBMITTED):
        abstract.expire()
