"""Download helpers: one turns every request error into its own failure, the others let a
status error (a 4xx too) go on to their callers."""

import requests


class ImportFailure(Exception):
    pass


def store_image(url):
    try:
        response = requests.get(url, timeout=10)
        response.raise_for_status()
    except Exception as exc:
        raise ImportFailure(f"could not download {url}") from exc
    return response.content


def fetch_item(url):
    response = requests.get(url, timeout=10)
    response.raise_for_status()
    return response.json()


def fetch_or_none(url):
    response = requests.get(url, timeout=10)
    try:
        response.raise_for_status()
    except requests.HTTPError as exc:
        if exc.response.status_code == 404:
            return None
        raise
    return response.json()


def describe(item):
    return fetch_item(item["href"])
