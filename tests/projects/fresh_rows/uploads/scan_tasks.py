"""A query's update keyed on the id a caller hands over: where every caller made the row just
before (its key handed as text, read back with `int()`), only that run writes it."""

from celery import shared_task

from uploads.models import Status, Upload


def _finish(upload_id, failed):
    key = int(upload_id)
    if failed:
        Upload.objects.filter(id=key).update(status=Status.FAILED)  # ok: IDM103 every caller's caller hands over the id of a row it just made


@shared_task
def scan_upload(upload_id):
    try:
        _finish(upload_id, upload_id is None)
    except Exception:
        Upload.objects.filter(id=int(upload_id)).update(status=Status.FAILED)  # ok: IDM103 the row its one caller just made
        raise


@shared_task
def rescan_upload(upload_id):
    Upload.objects.filter(id=upload_id).update(status=Status.FAILED)  # expect: IDM103 "sets status to Status.FAILED with no precondition" its caller hands over a stored upload
