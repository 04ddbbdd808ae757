"""A model whose methods lock its own row through an inherited method before testing its state:
`self.lock_me()` locks and reloads the record, so the test reads what the lock holds. Twins: a
method that only locks, one whose transaction ends as it returns, one whose name another class
defines without a lock, and no lock at all."""

from django.db import models, transaction

from ledger.lockable import LockableMixin


class Contest(LockableMixin, models.Model):
    status = models.CharField(max_length=20)

    @transaction.atomic
    def freeze(self):
        self.lock_me()
        if self.status in ("open", "paused"):
            self.status = "frozen"  # ok: IDM101 the row is locked and the record reloaded first
            self.save()

    @transaction.atomic
    def pause(self):
        self.lock_only()
        if self.status in ("open", "frozen"):
            self.status = "paused"  # expect: IDM101 "tested on line 24 on the in-memory instance without a lock"
            self.save()

    @transaction.atomic
    def close(self):
        self.lock_briefly()
        if self.status in ("open", "paused"):
            self.status = "closed"  # expect: IDM101
            self.save()

    @transaction.atomic
    def archive(self):
        self.hold()
        if self.status == "closed":
            self.status = "archived"  # expect: IDM101
            self.save()

    def reopen(self):
        if self.status in ("paused", "frozen"):
            self.status = "open"  # expect: IDM101
            self.save()
