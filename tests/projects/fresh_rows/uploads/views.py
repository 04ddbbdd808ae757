"""The requests that make the rows, and hand them (or their keys) to the work."""

from celery import chain

from uploads.models import Crawl, Feed
from uploads.tasks import check_feed, crawl_site, mark_crawled, mark_feed_read, process_upload, refresh_feed


class UploadViewSet:
    def perform_create(self, serializer):
        upload = serializer.save(uploader=self.request.user)
        process_upload(upload)


def start_crawl(site):
    crawl = Crawl.objects.create(site=site)
    chain(crawl_site.s(crawl.pk), mark_crawled.si(crawl.pk)).apply_async()


def read_feed(feed_id):
    check_feed.delay(feed_id)  # a row made elsewhere, perhaps long ago


def refresh(pk):
    feed = Feed(pk=pk)
    feed.save()
    refresh_feed.delay(feed.pk)


def reread(feed_id):
    mark_feed_read.delay(feed_id)


def read_new_feed():
    feed = Feed.objects.create()
    mark_feed_read.delay(feed.pk)
