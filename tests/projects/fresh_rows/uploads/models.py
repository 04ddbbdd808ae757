"""A processing queue: each upload request makes a row, and the work it starts writes its status."""

from django.db import models


class Status(models.IntegerChoices):
    ENQUEUED = 1
    IN_PROGRESS = 2
    SUCCESSFUL = 3
    FAILED = 4


class Upload(models.Model):
    status = models.IntegerField(choices=Status.choices, default=Status.ENQUEUED)
    kind = models.IntegerField()


class Crawl(models.Model):
    status = models.IntegerField(choices=Status.choices, default=Status.ENQUEUED)


class Feed(models.Model):
    status = models.IntegerField(choices=Status.choices, default=Status.ENQUEUED)


class Account(models.Model):
    plan_status = models.CharField(max_length=10)

    def pause(self, payment):
        self.plan_status = "paused"  # expect: IDM103 "sets plan_status to 'paused' with no precondition" its self is the account
        self.save()


class Payment(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE)
    status = models.CharField(max_length=10)

    def confirm(self, account):
        self.status = "confirmed"  # ok: IDM103 called on its class with the payment the caller just made as self
        self.save()


class Export(models.Model):
    status = models.IntegerField(choices=Status.choices, default=Status.ENQUEUED)
    token = models.CharField(max_length=40, unique=True)
    owner_id = models.IntegerField()
    batch = models.IntegerField()


class Archive(models.Model):
    status = models.IntegerField(choices=Status.choices, default=Status.ENQUEUED)

    def finish(self):
        self.status = Status.SUCCESSFUL  # ok: IDM103 every `finish` call in the project is on a row just made
        self.save()

    def abandon(self):
        self.status = Status.FAILED  # expect: IDM103 "sets status to Status.FAILED with no precondition" one `abandon` call is on a row found
        self.save()


class ReportStatus(models.TextChoices):
    QUEUED = "queued"
    DONE = "done"
    FAILED = "failed"


class Report(models.Model):
    uuid = models.UUIDField()
    owner_id = models.IntegerField()
    status = models.CharField(max_length=10, choices=ReportStatus.choices, default=ReportStatus.QUEUED)
    task_id = models.CharField(max_length=40)

    def render(self, landscape):
        return landscape

    def send(self):
        self.status = ReportStatus.DONE  # expect: IDM103 "sets status to ReportStatus.DONE with no precondition" one call is on a holder's report
        self.save()


class Binder(models.Model):
    status = models.CharField(max_length=10)


class Channel(models.Model):
    slug = models.SlugField(primary_key=True)  # `Channel(slug=...).save()` may save a stored channel again
    status = models.IntegerField(choices=Status.choices, default=Status.ENQUEUED)


class Message(models.Model):
    status = models.CharField(max_length=10, default="draft")
    subject = models.CharField(max_length=80)

    def send_draft(self):
        if self.status != "draft":
            raise ValueError("only drafts are sent")
        self.status = "sending"  # ok: IDM101 every caller builds a new message and saves it first: no other run has it
        self.save()

    def send_stored(self):
        if self.status != "draft":
            raise ValueError("only drafts are sent")
        self.status = "sending"  # expect: IDM101 "tested on line" a caller builds it with its key: a row that may exist
        self.save()


class Delivery(models.Model):
    """A log row per webhook delivery: the view that receives it creates it, then records how
    its handling went on it (`webhook_views.py`)."""

    status = models.CharField(max_length=10, default="received")
    error = models.TextField(blank=True)

    def mark_handled(self):
        self.status = "handled"  # ok: IDM103 every caller holds the row it created (or None, which no method runs on)
        self.save()

    def mark_refused(self, reason):
        self.status = "refused"  # ok: IDM103 every caller holds the row it created (or None, which no method runs on)
        self.error = reason
        self.save()


class Inbox(models.Model):
    """The twin: the row a delivery is recorded on may be one an earlier delivery made."""

    status = models.CharField(max_length=10, default="received")

    def mark_read(self):
        self.status = "read"  # expect: IDM103 "no precondition" the caller may hold a stored row
        self.save()
