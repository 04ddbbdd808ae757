from django.db import models


class OrderStatus(models.TextChoices):
    PENDING = "pending"
    PROCESSING = "processing"
    SHIPPED = "shipped"
    DELIVERED = "delivered"


class Order(models.Model):
    status = models.CharField(max_length=20, choices=OrderStatus.choices)


class RefundStatus(models.TextChoices):
    REQUESTED = "requested"
    ACCEPTED = "accepted"
    REJECTED = "rejected"


class Refund(models.Model):
    """The refund checks each move itself: it reads its own state into a local, looks the move
    up in its table through another local, and refuses what the table does not allow."""

    status = models.CharField(max_length=20, choices=RefundStatus.choices)

    def set_status(self, new_status, note=""):
        before = self.status
        if new_status == before:
            return
        moves = {RefundStatus.REQUESTED: (RefundStatus.ACCEPTED, RefundStatus.REJECTED)}
        allowed = moves.get(before, ())
        if new_status not in allowed:
            raise ValueError(f"refund cannot go from {before} to {new_status}")
        # its check reads the copy its caller loaded, through locals: two movers both pass it
        self.status = new_status  # expect: IDM101 "decided by self.status (the row this method runs on, as some caller loaded it), tested on line 29"
        self.save(update_fields=["status"])


class Payout(models.Model):
    """The payout remembers its old state only to log it: its one test is of the state asked
    for, so a late message moves a payout back."""

    state = models.CharField(max_length=20)

    def set_state(self, new_state, by=None):
        previous = self.state
        if not new_state:
            raise ValueError("no state")
        self.state = new_state
        self.save(update_fields=["state"])
        print("payout", self.pk, previous, "->", new_state)


class Export(models.Model):
    """For all its name, `set_progress_status` keeps no state here: it marks the export finished (a flag
    set once) and writes the progress to a file the page polls."""

    finished = models.BooleanField(default=False)

    def set_progress_status(self, value, to_file=True):
        if value == "finished":
            self.finished = True
            self.save(update_fields=["finished"])
        if to_file:
            with open(f"/tmp/export-{self.pk}.json", "w") as out:
                out.write(value)


class Import(models.Model):
    """`mark_status` names its column through `setattr`: a state write all the same."""

    status = models.CharField(max_length=20)

    def mark_status(self, value):
        setattr(self, "status", value)
        self.save(update_fields=["status"])


class ManifestStep(models.TextChoices):
    DOWNLOAD = "download"
    SUMMARY = "summary"


class ManifestState(models.TextChoices):
    START = "start"
    END = "end"


class Manifest(models.Model):
    """`state` is a document, not a state: a mapping from each step to the times it started and
    ended. Writing an entry of it (or emptying it) moves no record from one state to another."""

    state = models.JSONField(default=dict)
    stage = models.CharField(max_length=20)


def log_json(**fields):
    return fields


def now_text():
    return "2026-01-01T00:00:00"


class ManifestAccessor:
    def update_manifest_state(self, step, interval, manifest_id):
        manifest = Manifest.objects.select_for_update().get(id=manifest_id)
        print(log_json(msg="updating the manifest's times", manifest_id=manifest_id))
        if not manifest.state:
            manifest.state = {}
        if interval == ManifestState.START:
            manifest.state[step] = {}
        manifest.state[step][interval] = now_text()
        manifest.save(update_fields=["state"])

    def update_manifest_stage(self, stage, manifest_id):
        """The twin keeps a real state: the stage it is handed replaces the one held."""
        manifest = Manifest.objects.get(id=manifest_id)
        manifest.stage = stage
        manifest.save(update_fields=["stage"])


class StepStatus(models.TextChoices):
    RUNNING = "running"
    DONE = "done"


class Pipeline(models.Model):
    """The twin of the manifest's document: each entry holds a step's state, and the setter
    stores the state it is handed there, so a late message moves a step back."""

    step_status = models.JSONField(default=dict)

    def set_step_status(self, step, status):
        self.step_status[step] = status
        self.save(update_fields=["step_status"])


def transition_and_log(shipment, status):
    shipment.status = status
    shipment.save(update_fields=["status"])


class Shipment(models.Model):
    """A call named for logging that is handed the record and its state may write it."""

    status = models.CharField(max_length=20)

    def set_shipment_status(self, status):
        transition_and_log(self, status)
