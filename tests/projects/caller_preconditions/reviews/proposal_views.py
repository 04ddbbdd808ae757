"""Views named like the methods they run: each locks the proposal, then calls the method."""

from django.db import transaction

from reviews.proposals import Proposal


def withdraw(request, pk):
    with transaction.atomic():
        proposal = Proposal.objects.select_for_update().get(pk=pk)
        proposal.withdraw()


def shelve(request, pk):
    with transaction.atomic():
        proposal = Proposal.objects.select_for_update().get(pk=pk)
        proposal.shelve()


def act(request, pk):
    # one form, several buttons: withdraw the proposal, or shelve it
    if "withdraw" in request.POST:
        return withdraw(request, pk)
    return shelve(request, pk)


def act_by_name(request, pk):
    action = request.POST["action"]
    if action in ("shelve", "promote"):
        proposal = Proposal.objects.get(pk=pk)
        getattr(proposal, action)()
