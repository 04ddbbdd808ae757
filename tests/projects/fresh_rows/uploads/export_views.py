"""The requests that start export jobs."""

import asyncio
import threading
from functools import partial
from concurrent.futures import ThreadPoolExecutor

from django.db import transaction

from uploads import exports
from uploads.exports import ExportRun, audit_export, deliver_export, mail_export, seal_export, tag_export, zip_export
from uploads.models import Archive, Export

executor = ThreadPoolExecutor(max_workers=2)


def start_export(request):
    export = Export.objects.create(owner_id=request.user.id, batch=1)
    threading.Thread(target=exports.run_export, args=(export.pk,)).start()
    scheduler.add_job(exports.build_export, "date", args=[export.id])
    scheduler.add_job(exports.poll_export, "interval", minutes=5, args=[export.id])
    scheduler.add_job(exports.sweep_export, trigger="cron", hour=3, args=[export.id])
    loop.run_in_executor(None, exports.render_export, export.pk)
    executor.submit(exports.compress_export, export.pk)
    transaction.on_commit(lambda: mail_export.delay(export.pk))
    deliver_export.delay(token=export.token)
    zip_export.apply_async((export.pk,), countdown=10)
    transaction.on_commit(partial(seal_export.delay, export.pk))
    tag_export.apply_async((export.pk, "zip"))
    audit_export.delay(export.owner_id)
    archive = Archive.objects.create()
    archive.finish()
    run = ExportRun.objects.create()
    run.finish()
    run.abandon()


def export_again(request, pk):
    threading.Thread(target=exports.run_export_again, args=(pk,)).start()
    exports.close_batch(pk)
    asyncio.to_thread(exports.check_export, pk)
    tag_export.apply_async((pk,), {"kind": "csv"})
    found = Archive.objects.filter(pk=pk).first()
    found.abandon()


scheduler = None
loop = None
