from requests import Timeout
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from shop.payments import client as payments
from shop.payments.client import charge, new_key, notify, notify_keyed
from shop.payments.helpdesk import Badge, HelpDesk

from .. import payments as also_payments  # a package, not a function


@retry(retry=retry_if_exception_type(Timeout), stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def announce(order):
    notify("https://hooks.example/orders", {"order": order.id})  # expect: IDM301 "notify()"


@retry(retry=retry_if_exception_type(Timeout), stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def announce_module_attribute(order):
    payments.notify("https://hooks.example/orders", {"order": order.id})  # expect: IDM301 "notify()"


@retry(retry=retry_if_exception_type(Timeout), stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def announce_keyed(order, key):
    notify_keyed("https://hooks.example/orders", {"order": order.id}, key)  # ok: IDM301 keyed


@retry(retry=retry_if_exception_type(Timeout), stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge_with_fresh_key(order):
    charge(order)  # expect: IDM001 "charge()"


@retry(retry=retry_if_exception_type(Timeout), stop=stop_after_attempt(3), wait=wait_random_exponential(max=5))
def charge_with_given_key(order, key):
    charge(order, idempotency_key=key)  # ok: IDM001 the caller's key is used


def charge_in_loop(order):
    for _ in range(3):
        try:
            return charge(order, idempotency_key=new_key())  # expect: IDM001 "new_key()"
        except Timeout:  # expect: IDM202 goes round again at once
            continue


def open_ticket(subject):
    desk = HelpDesk(session=None)
    for _ in range(3):
        try:
            return desk.create_ticket(subject)  # expect: IDM301 "via _send()"
        except Timeout:  # expect: IDM202 goes round again at once
            continue


def badge(subject):
    badge = Badge()
    for _ in range(3):
        try:
            return badge.create_ticket(subject)  # ok: IDM301 an unrelated class with the same method name
        except Timeout:  # expect: IDM202 goes round again at once
            continue


def unknown(thing, subject):
    for _ in range(3):
        try:
            return thing.create_ticket(subject)  # ok: IDM301 unknown receiver stays unknown
        except Timeout:  # expect: IDM202 goes round again at once
            continue


def shadowed(subject):
    def notify(url, payload):  # a local function shadows the import
        return None

    for _ in range(3):
        try:
            return notify("https://hooks.example", subject)  # ok: IDM301 the local function
        except Timeout:  # expect: IDM202 goes round again at once
            continue


def through_package():
    for _ in range(3):
        try:
            return also_payments.helpers()  # ok: IDM301 nothing known
        except Timeout:  # expect: IDM202 goes round again at once
            continue


class PaymentFailed(Exception):
    pass


def capture(order):
    try:
        notify("https://pay.example/captures", {"order": order.id})
    except Timeout:  # expect: IDM302 "notify()"
        raise PaymentFailed(order.id)


def capture_unknown(order, outbox):
    try:
        notify("https://pay.example/captures", {"order": order.id})
    except Timeout:  # ok: IDM302 the outcome is left for reconciliation
        outbox.append(order.id)
