"""Methods a model inherits to lock its own row and load itself again, and ones that look
alike but do not hold the row for the caller: one that only locks (the instance keeps what it
was loaded with), one whose own transaction ends the lock as it returns, and a name another
class defines without a lock."""

from django.db import transaction


class LockableMixin:
    def lock_me(self):
        type(self).objects.select_for_update().get(id=self.id)
        self.refresh_from_db()

    def lock_only(self):
        type(self).objects.select_for_update().get(id=self.id)

    @transaction.atomic
    def lock_briefly(self):
        type(self).objects.select_for_update().get(pk=self.pk)
        self.refresh_from_db()

    def hold(self):
        type(self).objects.select_for_update().get(id=self.id)
        self.refresh_from_db()


class Scoreboard:
    def hold(self):
        self.refresh_from_db()
