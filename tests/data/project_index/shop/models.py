from django.db import models


class Job(models.Model):
    def set_status(self, status):
        if self.complete:
            return
        self.status = status
        self.save(update_fields=["status"])


class ChildJob(Job):
    def set_status(self, status):
        super().set_status(status)
        self.parent.touch()


class Payment(models.Model):
    def change_status(self, status):
        self.status = status
        self.save(update_fields=["status"])
