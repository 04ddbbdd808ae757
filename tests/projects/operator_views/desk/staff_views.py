"""Views only staff reach: the state they write is the one the operator chose. A permission,
a login or a role of the customer's own is no staff gate."""

from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.contrib.auth.decorators import login_required, permission_required, user_passes_test
from django.contrib.auth.mixins import PermissionRequiredMixin
from django.core.exceptions import PermissionDenied
from django.views import View
from rest_framework.decorators import action
from rest_framework.permissions import IsAdminUser, IsAuthenticated
from rest_framework.viewsets import ViewSet

from desk.permissions import IsOwnerOrAdmin
from desk.tickets import Ticket


@staff_member_required
def close(request, pk):
    ticket = Ticket.objects.get(pk=pk)
    ticket.status = "closed"  # ok: IDM103 a staff-only view
    ticket.save()


@user_passes_test(lambda user: user.is_superuser)
def escalate(request, pk):
    Ticket.objects.get(pk=pk).escalate()


@user_passes_test(lambda user: user.email.endswith("@example.com"))
def archive(request, pk):
    Ticket.objects.filter(pk=pk).update(status="archived")  # expect: IDM103 a test of no staff standing


@user_passes_test(lambda user: not user.is_staff)
def rate(request, pk):
    Ticket.objects.filter(pk=pk).update(status="rated")  # expect: IDM103 customers only


@login_required(login_url="/admin/login/")
def snooze(request, pk):
    Ticket.objects.filter(pk=pk).update(status="snoozed")  # expect: IDM103 a login, whatever its page


@permission_required("desk.change_ticket")
def park(request, pk):
    Ticket.objects.filter(pk=pk).update(status="parked")  # expect: IDM103 a permission a customer may hold


class HoldView(PermissionRequiredMixin, View):
    permission_required = "desk.change_ticket"

    def post(self, request, pk):
        Ticket.objects.filter(pk=pk).update(status="held")  # expect: IDM103 a permission a customer may hold


class TicketAdmin(admin.ModelAdmin):
    def response_change(self, request, obj):
        Ticket.objects.filter(pk=obj.pk).update(status="reviewed")  # ok: IDM103 the admin's own hook
        return super().response_change(request, obj)


class TicketAdminViewSet(ViewSet):
    permission_classes = [IsAuthenticated, IsAdminUser]

    def resolve(self, request, pk):
        Ticket.objects.filter(pk=pk).update(status="resolved")  # ok: IDM103 staff-only viewset

    @action(detail=True, methods=["post"], permission_classes=[IsAuthenticated])
    def dispute(self, request, pk):
        Ticket.objects.filter(pk=pk).update(status="disputed")  # expect: IDM103 the action lets customers on


class TicketViewSet(ViewSet):
    permission_classes = [IsOwnerOrAdmin]

    def resolve(self, request, pk):
        Ticket.objects.filter(pk=pk).update(status="resolved")  # expect: IDM103 the ticket's owner passes


def suspend(request, pk):
    if not request.user.is_staff:
        raise PermissionDenied
    Ticket.objects.filter(pk=pk).update(status="suspended")  # ok: IDM103 only staff pass the test


def withdraw(request, pk):
    ticket = Ticket.objects.get(pk=pk)
    if not (request.user.is_staff or ticket.opened_by == request.user):
        raise PermissionDenied
    Ticket.objects.filter(pk=pk).update(status="withdrawn")  # expect: IDM103 the customer who opened it passes too


def triage(request, pk):
    if request.user.is_superuser:
        Ticket.objects.filter(pk=pk).update(status="triaged")  # ok: IDM103 inside a staff test
    else:
        Ticket.objects.filter(pk=pk).update(status="queued")  # expect: IDM103 the branch anyone reaches


def claim(request, pk):
    ticket = Ticket.objects.get(pk=pk)
    if ticket.assignee.is_staff:
        Ticket.objects.filter(pk=pk).update(status="claimed")  # expect: IDM103 the assignee's standing, not the requester's
