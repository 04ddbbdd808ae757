"""Two final states (DONE, FAILED): a write of either may overwrite the other."""

from outbox.models import Export
from outbox.states import ExportStatus


def run(export_id, build):
    export = Export.objects.get(pk=export_id)
    if export.status in (ExportStatus.DONE, ExportStatus.FAILED):
        return
    if Export.objects.filter(pk=export_id, status=ExportStatus.PENDING).update(status=ExportStatus.RUNNING):
        build(export)


def finished(export_id):
    export = Export.objects.get(pk=export_id)
    export.status = ExportStatus.DONE  # expect: IDM103 "sets status to ExportStatus.DONE with no precondition"
    export.save()


def failed(export_id):
    export = Export.objects.get(pk=export_id)
    export.status = ExportStatus.FAILED  # expect: IDM103 "sets status to ExportStatus.FAILED with no precondition"
    export.save()
