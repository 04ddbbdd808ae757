"""Functions retried by a decorator another module binds (`from .retry_config import
network_retry`): each attempt runs the whole body again, so a key made inside is new on every
attempt and a POST sent without one may pay twice. A decorator of that module that is no retry
(`audited`), or one that makes a single attempt (`stop_after_attempt(1)`), repeats nothing."""

import uuid

import requests

from payouts.retry_config import audited, network_retry, single_try


@network_retry
def send_transfer(account, amount):
    key = str(uuid.uuid4())  # expect: IDM001 "runs on every attempt of the @network_retry (tenacity.retry)"
    return requests.post("https://bank.example/transfers", json={"to": account, "amount": amount}, headers={"Idempotency-Key": key}, timeout=5)


@network_retry
def send_unkeyed(account, amount):
    return requests.post("https://bank.example/transfers", json={"to": account, "amount": amount}, timeout=5)  # expect: IDM301


@audited
def send_once(account, amount):
    key = str(uuid.uuid4())  # ok: IDM001 audited() runs the function once
    return requests.post("https://bank.example/transfers", json={"to": account, "amount": amount}, headers={"Idempotency-Key": key}, timeout=5)


@single_try
def send_tried_once(account, amount):
    key = str(uuid.uuid4())  # ok: IDM001 stop_after_attempt(1): one attempt, no retry
    return requests.post("https://bank.example/transfers", json={"to": account, "amount": amount}, headers={"Idempotency-Key": key}, timeout=5)
