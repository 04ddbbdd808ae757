"""Admin actions: the operator picks the proposals and the state they move to."""

from django.contrib import admin

from reviews.proposals import Proposal, ProposalState


@admin.action(description="Reinstate the selected proposals")
def reinstate_selected(modeladmin, request, queryset):
    for proposal in queryset:
        proposal.reinstate()


def lapse_selected(modeladmin, request, queryset):
    for proposal in queryset:
        proposal.let_lapse()


class ProposalAdmin(admin.ModelAdmin):
    actions = [reinstate_selected, lapse_selected]

    def withdraw_selected(self, request, queryset):
        Proposal.objects.filter(pk__in=queryset.values("pk")).update(state=ProposalState.WITHDRAWN)  # ok: IDM103 the operator chose the rows and the state


class ProposalActions:
    @admin.action(description="Withdraw the marked proposals")
    def withdraw_marked(self, request, rows):
        Proposal.objects.filter(pk__in=rows).update(state=ProposalState.WITHDRAWN)  # ok: IDM103 an action by its decorator


class ProposalViewSet:
    def withdraw_selected(self, request, queryset):
        Proposal.objects.filter(pk__in=queryset).update(state=ProposalState.WITHDRAWN)  # expect: IDM103 an action's shape, in no admin


def withdraw_everything():
    Proposal.objects.all().update(state=ProposalState.WITHDRAWN)  # expect: IDM103 "sets state to ProposalState.WITHDRAWN with no precondition"
