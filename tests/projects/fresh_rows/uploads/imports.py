"""Rows made by a helper of the file that returns what it made, handed to the method that
records each row's outcome."""

from uploads.models import Status, Upload


class RowImport:
    def _create_upload(self, kind):
        return Upload.objects.create(kind=kind)

    def _find_upload(self, kind):
        return Upload.objects.filter(kind=kind).first()

    def run(self, kinds):
        for kind in kinds:
            upload = self._create_upload(kind)
            self._record_failure(upload)
            found = self._find_upload(kind)
            self._record_success(found)

    def _record_failure(self, upload):
        upload.status = Status.FAILED  # ok: IDM103 the row the helper just made
        upload.save()

    def _record_success(self, upload):
        upload.status = Status.SUCCESSFUL  # expect: IDM103 "sets status to Status.SUCCESSFUL with no precondition"
        upload.save()
