"""Webhooks that count their failed calls: the counting helper tests and writes with no lock of
its own, and each caller holds the row, read in a `try` whose handlers all leave (a deleted or
busy hook ends the call), so the lock holds after the `try`. A caller whose handler goes on
without the row, or whose lock is read only in a branch, holds nothing for the helper."""

from django.db import OperationalError, models, transaction


class Hook(models.Model):
    failed_calls = models.IntegerField(default=0)
    active = models.BooleanField(default=True)


class Feed(models.Model):
    failed_calls = models.IntegerField(default=0)


def call_hook(hook_id, send):
    with transaction.atomic():
        try:
            hook = Hook.objects.select_for_update(nowait=True).get(id=hook_id, active=True)
        except Hook.DoesNotExist:
            return
        except OperationalError as error:
            if "could not obtain lock" in str(error):
                return
            raise
        count_failure(hook, send(hook))


def count_failure(hook, ok):
    if ok:
        hook.failed_calls = 0
        hook.save()
    elif hook.failed_calls < 8:
        hook.failed_calls += 1  # ok: IDM101 every caller holds the row's lock
        hook.save()


def call_feed(feed_id, send):
    with transaction.atomic():
        feed = None
        try:
            feed = Feed.objects.select_for_update().get(id=feed_id)
        except Feed.DoesNotExist:
            pass
        feed = feed or Feed.objects.get(id=feed_id)
        count_feed_failure(feed, send(feed))


def count_feed_failure(feed, ok):
    if not ok and feed.failed_calls < 8:
        feed.failed_calls += 1  # expect: IDM101 "tested on line 52" the handler goes on without the lock
        feed.save()
