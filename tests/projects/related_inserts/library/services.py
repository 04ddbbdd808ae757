"""A service module's helper that inserts a loan for its caller."""

from library.models import Loan


def open_loan(copy, member):
    return Loan.objects.create(copy=copy, member=member)
