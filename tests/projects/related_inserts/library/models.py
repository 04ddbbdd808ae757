"""A lending library: loans hang off a copy and a member through related names."""

from django.db import IntegrityError, models


class Member(models.Model):
    name = models.CharField(max_length=80)


class Copy(models.Model):
    title = models.CharField(max_length=80)

    def lend_to(self, member):
        return self._record_loan(member)

    def _record_loan(self, member):
        return Loan.objects.create(copy=self, member=member)

    def hold_for(self, member):
        return Hold.objects.create(copy=self, member=member)

    def reserve_for(self, member):
        reservation, _made = Reservation.objects.get_or_create(copy=self, member=member)
        return reservation

    def queue_for(self, member):
        try:
            return Waitlist.objects.create(copy=self, member=member)
        except IntegrityError:
            return Waitlist.objects.get(copy=self, member=member)

    def note_visit(self, member):
        return Visit.objects.create(copy=self, member=member)

    def book(self, member, day):
        return self.bookings.create(member=member, day=day)


class Loan(models.Model):
    copy = models.ForeignKey(Copy, related_name="loans", on_delete=models.CASCADE)
    member = models.ForeignKey(Member, related_name="loans", on_delete=models.CASCADE)


class Hold(models.Model):
    copy = models.ForeignKey(Copy, related_name="holds", on_delete=models.CASCADE)
    member = models.ForeignKey(Member, related_name="holds", on_delete=models.CASCADE)

    class Meta:
        unique_together = ("copy", "member")


class Reservation(models.Model):
    copy = models.ForeignKey(Copy, related_name="reservations", on_delete=models.CASCADE)
    member = models.ForeignKey(Member, on_delete=models.CASCADE)


class Waitlist(models.Model):
    copy = models.ForeignKey(Copy, related_name="waitlist", on_delete=models.CASCADE)
    member = models.ForeignKey(Member, on_delete=models.CASCADE)


class Visit(models.Model):
    copy = models.ForeignKey(Copy, related_name="visits", on_delete=models.CASCADE)
    member = models.ForeignKey(Member, on_delete=models.CASCADE)


class Label(models.Model):
    copy = models.ForeignKey(Copy, related_name="labels", on_delete=models.CASCADE)


class Sticker(models.Model):
    member = models.ForeignKey(Member, related_name="labels", on_delete=models.CASCADE)


class Booking(models.Model):
    copy = models.ForeignKey(Copy, related_name="bookings", on_delete=models.CASCADE)
    member = models.ForeignKey(Member, on_delete=models.CASCADE)
    day = models.DateField()

    class Meta:
        unique_together = ("copy", "member", "day")


class Branch(models.Model):
    name = models.CharField(max_length=80)


class Request(models.Model):
    member = models.ForeignKey(Member, related_name="requests", on_delete=models.CASCADE)
    branch = models.ForeignKey("library.Branch", related_name="requests", on_delete=models.CASCADE)
    title = models.CharField(max_length=80)


class AuditEntry(models.Model):
    copy = models.ForeignKey(Copy, on_delete=models.CASCADE)
    member = models.ForeignKey(Member, on_delete=models.CASCADE)
