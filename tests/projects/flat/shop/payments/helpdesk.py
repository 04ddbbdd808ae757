"""A wrapper two calls deep: create_ticket() -> _send() -> requests.post()."""

import requests


class HelpDesk:
    def __init__(self, session):
        self.session = session

    def create_ticket(self, subject):
        return self._send("POST", {"subject": subject})

    def _send(self, method, body):
        return requests.post("https://help.example/tickets", json=body, timeout=5)


class Badge:
    """Same method name as a wrapper elsewhere, touches nothing outside."""

    def create_ticket(self, subject):
        return subject.upper()
