import requests
from zope.interface import implementer

from shop.support.interfaces import IAuditLog, IInbox


@implementer(IInbox)
class AuditedInbox:
    """First by name, and keyed: the interface's call may still reach RemoteInbox's unkeyed POST."""

    def open_conversation(self, *, body):
        key = f"conversation-{body['id']}"
        return requests.post("https://support.example/conversations", json=body, headers={"Idempotency-Key": key}, timeout=10)


@implementer(IInbox)
class ConsoleInbox:
    def open_conversation(self, *, body):
        print(body)


@implementer(IInbox)
class RemoteInbox:
    def __init__(self, session):
        self.http = session

    def open_conversation(self, *, body):
        return requests.post("https://support.example/conversations", json=body, timeout=10)


@implementer(IAuditLog)
class FileAuditLog:
    def record(self, *, entry):
        with open("audit.log", "a") as log:
            log.write(entry)
