"""Sends the requests the operations build: the method is the request's own."""

import httpx

from acme import utils


class BaseSDK:
    def __init__(self, client, transport):
        self.client = client
        self.transport = transport

    def do_request(self, request: httpx.Request, retry_codes=("5XX",)):
        def do():
            req = self.before_request(request)
            return self.client.send(req)  # expect: IDM301 "do_request() is handed its HTTP method in `request.method` by callers outside this module, so self.client.send() may send a POST: retried by utils.retry() on line 18"

        return utils.retry(do, utils.Retries(retry_codes))

    def publish(self, message):
        def do():
            return self.transport.send(message)  # ok: IDM301 a message, not a request object handed in

        return utils.retry(do, utils.Retries(("5XX",)))

    def ping(self, request: httpx.Request):
        def do():
            return self.client.send(request)  # ok: IDM301 the only caller, here, says what it sends

        return utils.retry(do, utils.Retries(("5XX",)))

    def health(self):
        return self.ping(self.client.build_request("GET", "/health"))

    def before_request(self, request):
        return request
