"""Writes through a manager that filters on the state have their precondition in it; the twins
go through a manager that filters on another column, or none."""

from registration.models import Claim, Household, PendingDocument, PendingHousehold


def merge(import_id):
    PendingHousehold.objects.filter(import_id=import_id).update(merge_status="merged")  # ok: IDM103 PendingManager finds pending rows only


def merge_one(pk):
    household = PendingHousehold.objects.get(pk=pk)
    household.merge_status = "merged"  # ok: IDM103 PendingManager finds pending rows only
    household.save()


def merge_any(import_id):
    Household.objects.filter(import_id=import_id).update(merge_status="merged")  # expect: IDM103 "no precondition" LiveManager filters on another column


def merge_all_rows(import_id):
    PendingHousehold._base_manager.filter(import_id=import_id).update(merge_status="merged")  # expect: IDM103 "no precondition" the base manager filters nothing


def merge_documents(import_id):
    documents = PendingDocument.objects.filter(import_id=import_id)
    documents.update(merge_status="merged")  # ok: IDM103 the queryset held in a name goes through PendingManager


def merge_any_documents(import_id):
    documents = PendingDocument._base_manager.filter(import_id=import_id)
    documents.update(merge_status="merged")  # expect: IDM103 "no precondition" the base manager filters nothing


def merge_claim(pk):
    Claim.objects.filter(pk=pk).update(merge_status="merged")  # expect: IDM103 "sets merge_status to 'merged' with no precondition" two models are named Claim
