"""A request core whose HTTP method its callers name; traps that must stay unknown."""

import time

from shop.gateway import core as core_module
from shop.gateway.core import Core, forward_default, http_request, read, send
from shop.gateway.core import http_request as send_it
from shop.gateway.star import *  # noqa: F403


def make(body):
    client = Core()
    for attempt in range(3):
        try:
            return client.create(body)  # expect: IDM301 "Core.create() makes POST self.session.request()"
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def look(thing_id):
    client = Core()
    for attempt in range(3):
        try:
            return client.fetch(thing_id)  # ok: IDM301 a GET through the same core
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def post_direct(url, body):
    for attempt in range(3):
        try:
            return http_request("POST", url, body)  # expect: IDM301 "http_request() makes POST requests.request()"
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def post_aliased(url, body):
    for attempt in range(3):
        try:
            return send_it(verb="POST", url=url, body=body)  # expect: IDM301 "http_request() makes POST"
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def forward(verb, url, body):
    return http_request(verb, url, body)


def post_forwarded(url, body):
    for attempt in range(3):
        try:
            return forward("PATCH", url, body)  # expect: IDM301 "forward() makes PATCH requests.request()"
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def put_forwarded(url, body):
    for attempt in range(3):
        try:
            return forward("PUT", url, body)  # ok: IDM301 PUT is idempotent
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def shadowed(url, body, http_request):
    for attempt in range(3):
        try:
            return http_request("POST", url, body)  # ok: IDM301 the parameter shadows the import
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def dynamic(url, body, name):
    for attempt in range(3):
        try:
            return getattr(core_module, name)("POST", url, body)  # ok: IDM301 a dynamic target stays unknown
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def starred(url, body):
    for attempt in range(3):
        try:
            return starred_post(url, body)  # ok: IDM301 a star import's names are not followed
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def post_by_default(url, body):
    for attempt in range(3):
        try:
            return send(url, body)  # expect: IDM301 "send() makes POST requests.request()"
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def get_by_default(url):
    for attempt in range(3):
        try:
            return read(url)  # ok: IDM301 the method left out is the default, a GET
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def get_instead_of_the_default(url, body):
    for attempt in range(3):
        try:
            return send(url, body, verb="GET")  # ok: IDM301 the caller names a GET over the default POST
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def chosen_at_run_time(url, body, verb):
    for attempt in range(3):
        try:
            return send(url, body, verb)  # ok: IDM301 a method chosen at run time stays unknown
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def forwarded_default(url, body):
    for attempt in range(3):
        try:
            return forward_default(url, body)  # expect: IDM301 "forward_default() makes PATCH requests.request()"
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202


def passed_on(url, body, **options):
    for attempt in range(3):
        try:
            return send(url, body, **options)  # ok: IDM301 the options may name the method: the default may not hold
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202
