"""Mutual recursion between modules must end."""

from requests import Timeout

from shop.jobs import other


def ping(n):
    return other.pong(n - 1) if n else None


def run():
    for _ in range(3):
        try:
            return ping(3)  # ok: IDM301 nothing external at the end of the cycle
        except Timeout:
            continue
