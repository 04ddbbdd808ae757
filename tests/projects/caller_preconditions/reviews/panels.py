"""A panel's `retire` retires each member (`step_down`). Where every call runs under a lock the
caller takes (the row's, or a named one around a fresh read), a duplicate waits, then sees the
state the first wrote. `dissolve` has a caller that takes no lock, `wind_up` one that read the
panel before taking the lock: their tests may be stale, and stay reported."""

from django.db import models


class PanelState(models.IntegerChoices):
    ACTIVE = 1
    RETIRED = 2


class Panel(models.Model):
    state = models.IntegerField(choices=PanelState.choices)

    def retire(self):
        if self.state != PanelState.ACTIVE:
            return
        for member in self.members.all():
            member.step_down()
        self.state = PanelState.RETIRED  # ok: IDM101 every caller holds the panel's named lock
        self.save()

    def dissolve(self):
        if self.state != PanelState.ACTIVE:
            return
        for member in self.members.all():
            member.leave()
        self.state = PanelState.RETIRED  # expect: IDM101 "tested on line 26" one caller takes no lock
        self.save()

    def wind_up(self):
        if self.state != PanelState.ACTIVE:
            return
        self.state = PanelState.RETIRED  # expect: IDM101 "tested on line 34" read before the lock: may be stale
        self.save()


class Member(models.Model):
    state = models.IntegerField(choices=PanelState.choices)
    panel = models.ForeignKey(Panel, related_name="members", on_delete=models.CASCADE)

    def step_down(self):
        if self.state != PanelState.ACTIVE:
            return
        self.state = PanelState.RETIRED  # ok: IDM101 called under a row lock, or from a panel's locked retire
        self.save()

    def leave(self):
        if self.state != PanelState.ACTIVE:
            return
        self.state = PanelState.RETIRED  # expect: IDM101 "tested on line 51" the panel's dissolve runs unlocked
        self.save()
