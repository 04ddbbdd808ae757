"""The work each request starts. Where every caller hands over a row it just made, only that
run writes the row: its status moves no other run's record back."""

from celery import shared_task

from uploads.models import Channel, Crawl, Feed, Status, Upload


def process_upload(upload):
    if upload.kind == 1:
        process_docket.delay(upload.pk)
    else:
        process_claims(upload.pk)


@shared_task
def process_docket(pk):
    upload = Upload.objects.get(pk=pk)
    upload.status = Status.IN_PROGRESS  # ok: IDM103 handed on by a function every caller hands a row it just made
    upload.save()


def process_claims(pk):
    upload = Upload.objects.get(pk=pk)
    upload.status = Status.SUCCESSFUL  # expect: IDM103 "sets status to Status.SUCCESSFUL with no precondition"
    upload.save()


@shared_task
def crawl_site(pk):
    crawl = Crawl.objects.get(pk=pk)
    crawl.status = Status.IN_PROGRESS  # ok: IDM103 queued in a chain with a fresh row's key (`.si`)
    crawl.save()


@shared_task
def mark_crawled(result, pk):
    crawl = Crawl.objects.get(pk=pk)
    crawl.status = Status.SUCCESSFUL  # expect: IDM103 "sets status to Status.SUCCESSFUL with no precondition"
    crawl.save()


@shared_task
def check_feed(pk):
    feed = Feed.objects.get(pk=pk)
    feed.status = Status.IN_PROGRESS  # expect: IDM103 "sets status to Status.IN_PROGRESS with no precondition"
    feed.save()


@shared_task
def refresh_feed(pk):
    feed = Feed.objects.get(pk=pk)
    feed.status = Status.SUCCESSFUL  # ok: IDM103 its caller builds the feed of keywords that name no key: a new row
    feed.save()


@shared_task
def sync_feed(pk):
    feed = Feed.objects.get(pk=pk)
    feed.status = Status.SUCCESSFUL  # expect: IDM103 "sets status to Status.SUCCESSFUL" its caller set the feed's key: a stored feed perhaps
    feed.save()


@shared_task
def recheck_channel(pk):
    channel = Channel.objects.get(pk=pk)
    channel.status = Status.IN_PROGRESS  # expect: IDM103 "sets status to Status.IN_PROGRESS" its key was set after it was built
    channel.save()


@shared_task
def refresh_channel(pk):
    channel = Channel.objects.get(pk=pk)
    channel.status = Status.SUCCESSFUL  # expect: IDM103 "sets status to Status.SUCCESSFUL" built by its key, it may be a stored row
    channel.save()


@shared_task
def mark_feed_read(pk):
    feed = Feed.objects.get(pk=pk)
    feed.status = Status.SUCCESSFUL  # expect: IDM103 "sets status to Status.SUCCESSFUL with no precondition"
    feed.save()


@shared_task
def reset_feed(pk):
    feed = Feed.objects.get(pk=pk)
    feed.status = Status.IN_PROGRESS  # expect: IDM103 "sets status to Status.IN_PROGRESS with no precondition"
    feed.save()


@shared_task
def retry_feed(pk):
    feed = Feed.objects.get(pk=pk)
    feed.status = Status.IN_PROGRESS  # expect: IDM103 "sets status to Status.IN_PROGRESS with no precondition"
    feed.save()


def activate(account, payment):
    account.plan_status = "active"  # expect: IDM103 "sets plan_status to 'active' with no precondition"
    account.save()


def reprocess(pk):
    process_claims(pk)  # a key from anywhere: process_claims is not only handed fresh rows


@shared_task
def rerun_upload(pk):
    upload = Upload.objects.get(pk=pk)
    upload.status = Status.IN_PROGRESS  # expect: IDM103 "sets status to Status.IN_PROGRESS with no precondition"
    upload.save()


@shared_task
def retry_upload(pk):
    upload = Upload.objects.get(pk=pk)
    upload.status = Status.IN_PROGRESS  # expect: IDM103 "sets status to Status.IN_PROGRESS with no precondition"
    upload.save()


@shared_task(autoretry_for=(ConnectionError,), acks_late=True)  # expect: IDM202 "wait its fixed default_retry_delay"
def notify_upload(pk):
    upload = Upload.objects.get(pk=pk)
    upload.status = Status.SUCCESSFUL  # expect: IDM103 "sets status to Status.SUCCESSFUL with no precondition"
    upload.save()
    send_notice(upload)


@shared_task
def supersede_others(pk):
    others = Upload.objects.filter(kind=1).exclude(pk=pk)
    for other in others:
        other.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition"
        other.save()
    previous = Upload.objects.exclude(pk=pk).latest("pk")
    previous.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition"
    previous.save()


def send_notice(upload):
    return upload


@shared_task
def flag_feed(pk=None, args=None):
    feed = Feed.objects.get(pk=pk)
    feed.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition"
    feed.save()


class Plans:
    """Called on the class: a classmethod's positions start after `cls`, a staticmethod's at
    its first parameter. The fresh row is the payment, not the account."""

    @classmethod
    def start(cls, account, payment):
        account.plan_status = "started"  # expect: IDM103 "sets plan_status to 'started' with no precondition"
        account.save()

    @staticmethod
    def renew(note, account, payment):
        account.plan_status = "renewed"  # expect: IDM103 "sets plan_status to 'renewed' with no precondition"
        account.save()

    @staticmethod
    def settle(note, payment, account):
        payment.status = "settled"  # ok: IDM103 the payment is the row the caller just made
        payment.save()
