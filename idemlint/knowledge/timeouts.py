"""Exceptions that mean "the outcome is not known": a timeout, or a connection error that
may have come after the request was sent."""

from __future__ import annotations

TIMEOUT_EXCEPTIONS = {
    "requests.Timeout",
    "requests.ReadTimeout",
    "requests.exceptions.Timeout",
    "requests.exceptions.ReadTimeout",
    "requests.RequestException",
    "requests.exceptions.RequestException",
    "niquests.Timeout",
    "niquests.ReadTimeout",
    "niquests.exceptions.Timeout",
    "niquests.exceptions.ReadTimeout",
    "niquests.RequestException",
    "niquests.exceptions.RequestException",
    "httpx.TimeoutException",
    "httpx.ReadTimeout",
    "httpx.WriteTimeout",
    "httpx.PoolTimeout",
    "httpx.TransportError",
    "httpx.HTTPError",
    "httpx.RequestError",
    "httpx.NetworkError",
    "socket.timeout",
    "TimeoutError",
    "asyncio.TimeoutError",
    "concurrent.futures.TimeoutError",
    "aiohttp.ServerTimeoutError",
    "aiohttp.ClientError",
    "aiohttp.ClientConnectionError",
    "urllib3.exceptions.ReadTimeoutError",
    "urllib3.exceptions.TimeoutError",
    "botocore.exceptions.ReadTimeoutError",
    "stripe.error.APIConnectionError",
    "stripe.error.StripeError",
    "stripe.APIConnectionError",
    "stripe.StripeError",
    "stripe._error.APIConnectionError",
    "braintree.exceptions.TimeoutError",
    "braintree.exceptions.RequestTimeoutError",
}
# classes a timeout is also an instance of, beyond the timeout-bearing ones above: a test of one
# of these may let a timeout through
TIMEOUT_BASES = frozenset({"Exception", "BaseException", "OSError", "IOError", "EnvironmentError", "socket.error"})
