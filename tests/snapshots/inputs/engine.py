"""Snapshot input for idemlint's own codes: IDM800 here, IDM900 in engine_unparsable.py.txt."""

import requests


def ping():
    return requests.get("https://psp.example/health", timeout=5)  # noqa: IDM001
