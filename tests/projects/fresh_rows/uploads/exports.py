"""Export jobs: each request makes an export row and hands it, or its key, to the work that
runs it in a thread, a scheduler, an executor or a task queue. Only that run writes the row."""

from celery import shared_task

from uploads.models import Export, Status


class ExportRun:
    """A second class with methods of the same names as the archive's: a call of `finish` may
    run either, and every one of them is on a row just made."""

    def __init__(self, export):
        self.export = export

    def finish(self):
        self.status = Status.SUCCESSFUL  # ok: IDM103 every `finish` call in the project is on a row just made
        self.save()

    def abandon(self):
        self.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition" one `abandon` call is on a row found
        self.save()


def get_export_by_id(pk):
    return Export.objects.get(pk=pk)


def run_export(pk):
    export = Export.objects.get(pk=pk)
    _start(export)


def _start(export):
    export.status = Status.IN_PROGRESS  # ok: IDM103 loaded by the key of a row its callers just made
    export.save()


def run_export_again(pk):
    export = Export.objects.get(pk=pk)
    export.status = Status.IN_PROGRESS  # expect: IDM103 "sets status to Status.IN_PROGRESS with no precondition" a key from a request
    export.save()


def build_export(pk):
    export = get_export_by_id(pk)
    _build(export)


def _build(export):
    export.status = Status.SUCCESSFUL  # expect: IDM103 "sets status to Status.SUCCESSFUL with no precondition" a helper named for a lookup may give another table's row
    export.save()


def compress_export(pk):
    export = Export.objects.get(pk=pk)
    export.status = Status.SUCCESSFUL  # ok: IDM103 submitted to an executor with a row just made
    export.save()


def close_batch(pk):
    export = Export.objects.filter(batch=pk).first()
    _close(export)


def _close(export):
    export.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition" the first of a batch, not the row made
    export.save()


@shared_task
def mail_export(pk):
    export = Export.objects.get(pk=pk)
    export.status = Status.SUCCESSFUL  # expect: IDM103 "sets status to Status.SUCCESSFUL with no precondition" queued by a lambda, which reads the name when it runs
    export.save()


@shared_task
def deliver_export(token):
    export = Export.objects.get(token=token)
    export.status = Status.SUCCESSFUL  # ok: IDM103 found by the token of a row just made
    export.save()


@shared_task
def audit_export(owner_id):
    export = Export.objects.get(owner_id=owner_id)
    export.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition" the owner's key names another row
    export.save()


@shared_task
def zip_export(pk):
    export = Export.objects.get(pk=pk)
    export.status = Status.SUCCESSFUL  # ok: IDM103 queued with its arguments as a sequence, a row just made
    export.save()


@shared_task
def seal_export(pk):
    export = Export.objects.get(pk=pk)
    export.status = Status.SUCCESSFUL  # ok: IDM103 queued on commit through `partial`, a row just made
    export.save()


@shared_task
def tag_export(pk, kind):
    export = Export.objects.get(pk=pk)
    export.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition" one caller queues it with a key from a request
    export.save()


@shared_task
def poll_export(pk):
    export = Export.objects.get(pk=pk)
    export.status = Status.IN_PROGRESS  # expect: IDM103 "sets status to Status.IN_PROGRESS with no precondition" an interval job runs it again and again
    export.save()


def render_export(pk):
    export = Export.objects.get(pk=pk)
    export.status = Status.SUCCESSFUL  # ok: IDM103 run in an executor with a row just made (the function second, its arguments after)
    export.save()


def check_export(pk):
    export = Export.objects.get(pk=pk)
    export.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition" run in a thread with a key from a request
    export.save()


def sweep_export(pk):
    export = Export.objects.get(pk=pk)
    export.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition" a cron job runs it again and again
    export.save()
