"""The lending desk: logs the checkout, then opens the loan through the service module."""

from library.models import AuditEntry
from library.services import open_loan


def checkout(copy, member):
    AuditEntry.objects.create(copy=copy, member=member)
    return open_loan(copy, member)
