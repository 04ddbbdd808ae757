import requests


def starred_post(url, body):
    return requests.post(url, json=body, timeout=5)
