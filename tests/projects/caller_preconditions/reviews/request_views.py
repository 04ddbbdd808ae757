"""The callers of the change requests' transitions."""

from reviews.requests import ChangeRequest, RequestState, Waiver


def approve_view(request, barrier):
    change = ChangeRequest.objects.pending_for(barrier)
    change.approve()


def refuse_view(request, barrier):
    change = ChangeRequest.objects.open_for(barrier)
    if change:
        change.refuse()


def surrender_view(request, pk):
    change = ChangeRequest.objects.get(pk=pk, state=RequestState.ACTIVE)
    change.surrender()


def lapse_view(request, barrier):
    change = ChangeRequest.objects.latest_for(barrier)  # the newest request, in whatever state
    change.lapse()


def reopen_view(request, pk, replacement):
    change = ChangeRequest.objects.filter(pk=pk, state=RequestState.REFUSED).first()
    if replacement is not None:
        change = replacement
    change.reopen()


def waive_view(request, pk):
    waiver = Waiver.objects.get(pk=pk)  # by its key alone
    waiver.approve()
