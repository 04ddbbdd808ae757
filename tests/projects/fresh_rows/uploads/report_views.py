"""The requests that start report jobs."""

from uploads import models
from uploads.models import Binder, Report
from uploads.reports import (
    archive_report,
    bind_report,
    copy_report,
    file_report,
    print_report,
    publish_report,
    render_report,
    stamp_report,
)


def start_report(request, landscape):
    def _new_report():
        return Report.objects.create(owner_id=request.user.id)

    report = _new_report()
    arguments = {"owner": request.user.id, "report_id": report.id}
    if landscape:
        arguments["landscape"] = True
    result = render_report.apply_async((), arguments, countdown=10)
    if result.ready():
        report = Report.objects.get(id=report.id)  # the same row, read again
    report.task_id = result.task_id
    report.save()
    key = str(report.uuid)
    publish_report.send(key)
    stamp_report.send_with_options(args=(report.id,), delay=1000)


def reprint_report(request):
    report = Report.objects.create(owner_id=request.user.id)
    options = {"owner": request.user.id, "report_id": report.id}
    options["report_id"] = request.GET["report"]
    print_report.apply_async((), options)


def refile_report(request):
    report = Report.objects.create(owner_id=request.user.id)
    options = {"owner": request.user.id, "report_id": report.id}
    if request.GET.get("again"):
        options = {"owner": request.user.id, "report_id": request.GET["report"]}
    file_report.apply_async((), options)


def archive_reports(request):
    report = Report.objects.create(owner_id=request.user.id)
    key = str(report.uuid)
    archive_report.send(key)
    archive_report.send(request.GET["uuid"])


def recopy_report(request):
    report = Report.objects.create(owner_id=request.user.id)
    options = {"owner": request.user.id, "report_id": report.id}
    same = options
    same["report_id"] = request.GET["report"]
    copy_report.apply_async((), options)


def rebind_report(request):
    report = Report.objects.create(owner_id=request.user.id)
    report = Binder.objects.get(id=report.id)
    bind_report.delay(report.id)


def reissue_report(request):
    report = Report.objects.create(owner_id=request.user.id)
    report.send()


def reissue_held_report(request, holder):
    holder.report = Report.objects.create(owner_id=request.user.id)
    holder.report.send()


def rebind_named_report(request):
    report = models.Report.objects.create(owner_id=request.user.id)
    report = models.Binder.objects.get(id=report.id)
    bind_report.delay(report.id)


def repoint_report(request):
    report = Report.objects.create(owner_id=request.user.id)
    options = {"owner": request.user.id, "report_id": report.id}
    point_at_request(options, request)
    copy_report.apply_async((), options)


def point_at_request(options, request):
    options["report_id"] = request.GET["report"]
