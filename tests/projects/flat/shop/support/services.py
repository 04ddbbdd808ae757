import requests
from zope.interface import implementer

from shop.support.interfaces import IAuditLog, IInbox


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
