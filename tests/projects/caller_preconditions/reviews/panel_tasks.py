"""The callers of the panels' methods."""

from django.core.cache import cache
from django.db import transaction

from reviews.panels import Member, Panel


def retire_panel(pk):
    with cache.lock(f"panel-{pk}"):
        Panel.objects.get(pk=pk).retire()


def retire_member(pk):
    with transaction.atomic():
        member = Member.objects.select_for_update().get(pk=pk)
        member.step_down()


def dissolve_panel(pk):
    Panel.objects.get(pk=pk).dissolve()


def dissolve_member(pk):
    with transaction.atomic():
        member = Member.objects.select_for_update().get(pk=pk)
        member.leave()


def close_panel(pk):
    panel = Panel.objects.get(pk=pk)
    with cache.lock(f"panel-{pk}"):
        panel.wind_up()
