"""Payments sent by a retry loop with no idempotency key: each copy reports the same two
findings; where nothing in this project calls or names the copy, they say so."""

import time

import requests
from celery import shared_task
from django.core.management.base import BaseCommand


class LegacyGateway:
    """Replaced by Gateway: no module names this class any more."""

    def charge(self, order):
        for attempt in range(3):
            try:
                # expect: IDM301 "(nothing in this project calls or names LegacyGateway)"
                return requests.post("https://psp.example/charge", json={"order": order})
            except requests.ConnectionError:
                # expect: IDM202 "nothing in this project calls or names LegacyGateway"
                time.sleep(1)


class Gateway:
    def charge(self, order):
        for attempt in range(3):
            try:
                # expect: IDM301 "POST requests.post() is retried by the retry loop on line"
                return requests.post("https://psp.example/charge", json={"order": order})
            except requests.ConnectionError:
                # expect: IDM202 "sleeps a fixed or computed delay"
                time.sleep(1)

    def _refund(self, order):
        for attempt in range(3):
            try:
                # expect: IDM301 "nothing in this project calls or names _refund"
                return requests.post("https://psp.example/refund", json={"order": order})
            except requests.ConnectionError:
                # expect: IDM202 "nothing in this project calls or names _refund"
                time.sleep(1)

    def void(self, order):
        """Public, of a class the project names: a hook or an API, taken as reached."""
        for attempt in range(3):
            try:
                # expect: IDM301 "POST requests.post() is retried"
                return requests.post("https://psp.example/void", json={"order": order})
            except requests.ConnectionError:
                # expect: IDM202 "sleeps a fixed or computed delay"
                time.sleep(1)


def settle_by_hand(order):
    for attempt in range(3):
        try:
            # expect: IDM301 "nothing in this project calls or names settle_by_hand"
            return requests.post("https://psp.example/settle", json={"order": order})
        except requests.ConnectionError:
            # expect: IDM202 "nothing in this project calls or names settle_by_hand"
            time.sleep(1)


@shared_task
def settle_nightly():
    """A task the beat schedule names in the settings: the worker runs it by that name."""
    for attempt in range(3):
        try:
            # expect: IDM301 "POST requests.post() is retried"
            return requests.post("https://psp.example/settle", json={})
        except requests.ConnectionError:
            # expect: IDM202 "sleeps a fixed or computed delay"
            time.sleep(1)


@shared_task
def settle_weekly():
    """A task nothing in the code enqueues: registered with the worker, and a beat schedule kept
    in a database may name it, so it is taken as reached."""
    for attempt in range(3):
        try:
            # expect: IDM301 "POST requests.post() is retried"
            return requests.post("https://psp.example/settle", json={})
        except requests.ConnectionError:
            # expect: IDM202 "sleeps a fixed or computed delay"
            time.sleep(1)


class Command(BaseCommand):
    """Django finds a management command by its file; its base calls `handle`."""

    def handle(self, *args, **options):
        for attempt in range(3):
            try:
                # expect: IDM301 "POST requests.post() is retried"
                return requests.post("https://psp.example/settle", json={})
            except requests.ConnectionError:
                # expect: IDM202 "sleeps a fixed or computed delay"
                time.sleep(1)


def payout(order):
    """Named only in a dotted string the settings hand to a scheduler."""
    for attempt in range(3):
        try:
            # expect: IDM301 "POST requests.post() is retried"
            return requests.post("https://psp.example/payout", json={"order": order})
        except requests.ConnectionError:
            # expect: IDM202 "sleeps a fixed or computed delay"
            time.sleep(1)


def reconcile(order):
    """Called only from the tests: named, so treated as reached."""
    for attempt in range(3):
        try:
            # expect: IDM301 "POST requests.post() is retried"
            return requests.post("https://psp.example/reconcile", json={"order": order})
        except requests.ConnectionError:
            # expect: IDM202 "sleeps a fixed or computed delay"
            time.sleep(1)
