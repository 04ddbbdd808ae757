"""A generated client's base: one idempotency key per logical call, reused on every attempt
and put in the header an attribute names. The base leaves the attribute None; a client module
of the project names it for the API that reads keys, and not for the one that does not."""

import random
import time
import uuid

import httpx


class ApiBase:
    _key_header_name: str | None

    def __init__(self, base_url):
        self.base_url = base_url
        self._http = httpx.Client()
        self._key_header_name = None

    def _headers(self, options):
        headers = {}
        name = self._key_header_name
        if name and options.idempotency_key:
            headers[name] = options.idempotency_key
        return headers

    def request(self, options):
        if options.idempotency_key is None and options.method != "get":
            options.idempotency_key = f"retry-{uuid.uuid4()}"  # ok: IDM301 the billing client names the header
        for attempt in range(3):
            try:
                return self._http.request(
                    options.method, self.base_url + options.path, headers=self._headers(options), timeout=10
                )
            except httpx.TransportError:
                time.sleep(random.uniform(0, 2**attempt))
        raise RuntimeError("gave up")


class StreamBase:
    def __init__(self, base_url):
        self.base_url = base_url
        self._http = httpx.Client()
        self._replay_header = None

    def _headers(self, options):
        headers = {}
        if self._replay_header and options.idempotency_key:
            headers[self._replay_header] = options.idempotency_key
        return headers

    def request(self, options):
        if options.idempotency_key is None and options.method != "get":
            # expect: IDM301 "is named by `_replay_header`, which no file of the project sets"
            options.idempotency_key = f"retry-{uuid.uuid4()}"
        for attempt in range(3):
            try:
                return self._http.request(
                    options.method, self.base_url + options.path, headers=self._headers(options), timeout=10
                )
            except httpx.TransportError:
                time.sleep(random.uniform(0, 2**attempt))
        raise RuntimeError("gave up")


class LegacyBase:
    def __init__(self, base_url, legacy=False):
        self.base_url = base_url
        self._http = httpx.Client()
        self._legacy_key_header = None if legacy else "Idempotency-Key"

    def _headers(self, options):
        headers = {}
        if self._legacy_key_header and options.retry_idempotency_key:
            headers[self._legacy_key_header] = options.retry_idempotency_key
        return headers

    def request(self, options):
        if options.retry_idempotency_key is None:
            options.retry_idempotency_key = f"retry-{uuid.uuid4()}"  # ok: IDM301 named unless the client is a legacy one
        for attempt in range(3):
            try:
                return self._http.request(
                    options.method, self.base_url + options.path, headers=self._headers(options), timeout=10
                )
            except httpx.TransportError:
                time.sleep(random.uniform(0, 2**attempt))
        raise RuntimeError("gave up")


class SignedBase:
    def __init__(self, base_url):
        self.base_url = base_url
        self._http = httpx.Client()
        self._signed_key_header = None

    def _headers(self, options):
        headers = self._extra_headers(options)
        if self._signed_key_header and options.signed_idempotency_key:
            headers[self._signed_key_header] = options.signed_idempotency_key
        return headers

    def _extra_headers(self, options):
        return {}

    def request(self, options):
        if options.signed_idempotency_key is None:
            options.signed_idempotency_key = f"retry-{uuid.uuid4()}"  # ok: IDM301 the signed client sends it itself
        for attempt in range(3):
            try:
                return self._http.request(
                    options.method, self.base_url + options.path, headers=self._headers(options), timeout=10
                )
            except httpx.TransportError:
                time.sleep(random.uniform(0, 2**attempt))
        raise RuntimeError("gave up")


class LiteralBase:
    def __init__(self, base_url):
        self.base_url = base_url
        self._http = httpx.Client()

    def request(self, options):
        if options.literal_idempotency_key is None:
            options.literal_idempotency_key = f"retry-{uuid.uuid4()}"  # ok: IDM301 sent under a header it names
        for attempt in range(3):
            try:
                return self._http.request(
                    options.method,
                    self.base_url + options.path,
                    headers={"Idempotency-Key": options.literal_idempotency_key},
                    timeout=10,
                )
            except httpx.TransportError:
                time.sleep(random.uniform(0, 2**attempt))
        raise RuntimeError("gave up")
