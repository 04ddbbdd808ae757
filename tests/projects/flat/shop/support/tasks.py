from celery import shared_task
from requests import RequestException

from shop.support.interfaces import IAuditLog, IInbox


@shared_task(bind=True, autoretry_for=(RequestException,), retry_backoff=True, max_retries=3)
def report(task, request, body):
    inbox = request.find_service(IInbox)
    inbox.open_conversation(body=body)  # expect: IDM301 "RemoteInbox.open_conversation() makes requests.post()"


@shared_task(bind=True, autoretry_for=(RequestException,), retry_backoff=True, max_retries=3)
def audit(task, request, entry):
    log = request.find_service(IAuditLog)
    log.record(entry=entry)  # ok: IDM301 no implementation of the interface calls another system
