"""The requests that start a scan: one makes the upload it scans, one scans a stored one."""

from uploads.models import Upload
from uploads.scan_tasks import rescan_upload, scan_upload


def start_scan(request):
    upload = Upload.objects.create(kind=2)
    upload_id = upload.id
    scan_upload.delay(upload_id=str(upload_id))


def rescan(request, pk):
    upload = Upload.objects.get(pk=pk)
    rescan_upload.delay(upload_id=upload.id)
