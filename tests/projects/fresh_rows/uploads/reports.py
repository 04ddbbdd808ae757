"""Report jobs: the request makes a report row and queues the work with the row's key handed
in a mapping of keyword arguments, through a name holding the key, or through an actor's
`send`. Only that run writes the row."""

import dramatiq
from celery import shared_task

from uploads.models import Report, ReportStatus


@shared_task
def render_report(owner, report_id, landscape=False):
    report = Report.objects.get(id=report_id)
    try:
        report.render(landscape)
    except Exception:
        report.status = ReportStatus.FAILED  # ok: IDM103 its key came in the mapping of keyword arguments, from a row just made
        report.save()
        raise


@shared_task
def print_report(owner, report_id):
    report = Report.objects.get(id=report_id)
    report.status = ReportStatus.FAILED  # expect: IDM103 "sets status to ReportStatus.FAILED with no precondition" the mapping's key was replaced by one from the request
    report.save()


@shared_task
def file_report(owner, report_id):
    report = Report.objects.get(id=report_id)
    report.status = ReportStatus.DONE  # expect: IDM103 "sets status to ReportStatus.DONE with no precondition" the mapping's name is bound twice, once to a mapping from the request
    report.save()


@dramatiq.actor(max_retries=0)
def publish_report(report_uuid):
    report = Report.objects.get(uuid=report_uuid)
    report.status = ReportStatus.DONE  # ok: IDM103 sent by an actor with a name holding the key of a row just made
    report.save()


@dramatiq.actor(max_retries=0)
def archive_report(report_uuid):
    report = Report.objects.get(uuid=report_uuid)
    report.status = ReportStatus.DONE  # expect: IDM103 "sets status to ReportStatus.DONE with no precondition" one sender hands a key from the request
    report.save()


@dramatiq.actor(max_retries=0)
def stamp_report(report_id):
    report = Report.objects.get(id=report_id)
    report.status = ReportStatus.DONE  # ok: IDM103 sent with options, its arguments a sequence holding a row just made
    report.save()


@shared_task
def copy_report(owner, report_id):
    report = Report.objects.get(id=report_id)
    report.status = ReportStatus.DONE  # expect: IDM103 "sets status to ReportStatus.DONE with no precondition" the mapping is changed through another name
    report.save()


@shared_task
def bind_report(report_id):
    report = Report.objects.get(id=report_id)
    report.status = ReportStatus.DONE  # expect: IDM103 "sets status to ReportStatus.DONE with no precondition" the key read again is another model's row
    report.save()
