import requests

from shop.jobs import cycle


def pong(n):
    return cycle.ping(n - 1) if n else requests.get("https://example.com", timeout=5)
