"""The requests that make the rows, and hand them (or their keys) to the work."""

from celery import chain

from uploads.models import Account, Channel, Crawl, Feed, Payment, Upload
from uploads.serializers import UploadSerializer
from uploads.tasks import (
    Plans,
    activate,
    check_feed,
    flag_feed,
    crawl_site,
    mark_crawled,
    mark_feed_read,
    notify_upload,
    process_upload,
    recheck_channel,
    refresh_channel,
    refresh_feed,
    reset_feed,
    rerun_upload,
    retry_feed,
    retry_upload,
    supersede_others,
    sync_feed,
)


class UploadViewSet:
    def perform_create(self, serializer):
        upload = serializer.save(uploader=self.request.user)
        process_upload(upload)


def start_crawl(site):
    crawl = Crawl.objects.create(site=site)
    chain(crawl_site.si(crawl.pk), mark_crawled.s(crawl.pk)).apply_async()


def read_feed(feed_id):
    check_feed.delay(feed_id)  # a row made elsewhere, perhaps long ago


def refresh(url):
    feed = Feed(url=url)
    feed.save()
    refresh_feed.delay(feed.pk)


def refresh_mirrored(url, remote_id):
    feed = Feed(url=url)
    feed.pk = remote_id  # the remote's key: this may save over a stored feed
    feed.save()
    sync_feed.delay(feed.pk)


def recheck_by_slug(slug):
    channel = Channel(status=1)
    channel.slug = slug  # its key, set after it was built: this may save over a stored channel
    channel.save()
    recheck_channel.delay(channel.pk)


def refresh_by_slug(slug):
    channel = Channel(slug=slug)
    channel.save()
    refresh_channel.delay(channel.pk)


def reset(pk):
    feed = Feed(pk=pk)  # a key: this saves over a row that may exist
    feed.save()
    reset_feed.delay(feed.pk)


def find_or_make(url):
    feed = Feed.objects.filter(url=url).first()
    if feed is None:
        feed = Feed.objects.create(url=url)  # expect: IDM101
    retry_feed.delay(feed.pk)  # the row found is no new one


def upgrade(account):
    payment = Payment.objects.create(account=account)
    activate(account, payment)  # the fresh row is the payment, not the account


def reread(feed_id):
    mark_feed_read.delay(feed_id)


def read_new_feed():
    feed = Feed.objects.create()
    mark_feed_read.delay(feed.pk)


class UploadCreate:
    def create(self, request):
        existing = Upload.objects.filter(source=request.data["source"]).first()
        serializer = UploadSerializer(existing, data=request.data)
        upload = serializer.save()
        rerun_upload.delay(upload.pk)  # the serializer held a row that exists


def resubmit(request, upload):
    if upload.failed:
        upload = upload.retry_of
    retry_upload.delay(upload.pk)  # the parameter was bound again


def upload_and_notify(kind):
    upload = Upload.objects.create(kind=kind)
    notify_upload.delay(upload.pk)
    supersede_others.delay(upload.pk)


def flag_feed_with_delay_keywords():
    feed = Feed.objects.create()
    flag_feed.delay(args=(feed.pk,))  # a celery task's `.delay` passes these as keywords, not positions


def subscribe(account):
    payment = Payment.objects.create(account=account)
    Plans.start(account, payment)
    Plans.renew("yearly", account, payment)
    Plans.settle("paid", payment, account)
    Account.pause(account, payment)
    Payment.confirm(payment, account)
