"""The base of the project's feeds: a thread, and a client that is not one."""

import threading


class BaseFeed(threading.Thread):
    def __init__(self, client):
        super().__init__(daemon=True)
        self.client = client


class BaseCommand:
    def __init__(self, client):
        self.client = client
