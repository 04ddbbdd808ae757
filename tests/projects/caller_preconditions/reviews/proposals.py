"""A proposal's transitions are methods that write the state with no test of their own; the
views that run them share their names (`def withdraw(request, pk)` runs `proposal.withdraw()`)
and lock the row first. A view function, called by its bare name or named through its module
(`proposal_views.withdraw` in a URL table), is not the method: what those uses do says nothing
of the method's callers. A method named as a value (`getattr(proposal, action)` with the name
in a tuple of strings) may run with no lock, and stays reported. An admin action's call is the
operator's choice of rows and state: a method only such actions run is decided there."""

from django.db import models


class ProposalState(models.IntegerChoices):
    OPEN = 1
    WITHDRAWN = 2
    SHELVED = 3


class Proposal(models.Model):
    state = models.IntegerField(choices=ProposalState.choices)

    def withdraw(self):
        self.state = ProposalState.WITHDRAWN  # ok: IDM103 its callers are views of the same name that lock the row
        self.save()

    def reinstate(self):
        self.state = ProposalState.OPEN  # ok: IDM103 only an admin action runs it: the operator chose the rows and the state
        self.save()

    def let_lapse(self):
        self.state = ProposalState.OPEN  # expect: IDM103 "sets state to ProposalState.OPEN with no precondition" a task runs it too
        self.save()

    def shelve(self):
        self.state = ProposalState.SHELVED  # expect: IDM103 "sets state to ProposalState.SHELVED with no precondition"
        self.save()
