"""A customer's views: a login is no operator's gate."""

from django.contrib.auth.decorators import login_required

from desk.tickets import Ticket


@login_required
def reopen(request, pk):
    Ticket.objects.get(pk=pk).reopen()


@login_required
def mark_solved(request, pk):
    Ticket.objects.filter(pk=pk).update(status="solved")  # expect: IDM103 a customer's command
