"""Celery tasks that retry HTTPError: reported where a status error can reach the task (raised
by what it calls, or in its own body), quiet where none can."""

import random

import httpx
import requests
from celery import Task, shared_task
from requests.exceptions import HTTPError

from importer.catalog import load_product
from importer.downloads import ImportFailure, describe, fetch_item, fetch_or_none, store_image
from importer.models import Asset


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # ok: IDM201 store_image() turns every request error into ImportFailure
def download_asset(asset_id):
    asset = Asset.objects.get(pk=asset_id)
    asset.image = store_image(asset.url)
    asset.save()


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # ok: IDM201 the task touches only the database and storage
def verify_asset(asset_id):
    asset = Asset.objects.get(pk=asset_id)
    asset.verified = asset.image.storage.exists(asset.image.name)
    asset.save()


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # expect: IDM201 "HTTPError"
def import_item(url):
    return fetch_item(url)


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # expect: IDM201 "HTTPError" a handler that re-raises passes a 4xx on
def import_optional_item(url):
    return fetch_or_none(url)


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # expect: IDM201 "HTTPError" through a helper of a helper
def import_described(item):
    return describe(item)


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # ok: IDM201 the task ends every request error itself
def import_item_or_fail(url):
    try:
        return fetch_item(url)
    except Exception as exc:
        raise ImportFailure(url) from exc


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # expect: IDM201 "HTTPError" a method of that name may raise it
def import_through_client(client, url):
    return client.fetch_item(url)


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # expect: IDM201 "HTTPError" its module was not summarised
def import_product(sku):
    return load_product(sku)


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # expect: IDM201 "HTTPError" raised in a nested function
def import_checked(url):
    def fetch():
        response = requests.get(url, timeout=10)
        response.raise_for_status()
        return response.json()

    return fetch()


@shared_task(autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # expect: IDM201 "HTTPError" the helper is handed on
def import_all(urls):
    return list(map(fetch_item, urls))


@shared_task(bind=True, autoretry_for=(HTTPError,), max_retries=3)  # expect: IDM201 "HTTPError" retried by hand too
def import_retrying(self, url):
    try:
        response = requests.get(url, timeout=5)
        response.raise_for_status()
    except HTTPError as exc:
        raise self.retry(exc=exc, countdown=random.uniform(5, 15)) from exc
    return response.json()


@shared_task(autoretry_for=(httpx.HTTPStatusError,), retry_backoff=True, max_retries=3)  # expect: IDM201 "HTTPError" OSError is not the base of httpx's
def import_with_httpx(url):
    try:
        response = httpx.get(url)
        response.raise_for_status()
    except OSError:
        return None
    return response.json()


class HttpTask(Task):
    autoretry_for = (HTTPError,)  # expect: IDM201 "HTTPError" a Task class is judged for every task that names it
    retry_backoff = True


@shared_task(base=HttpTask)
def count_assets(n):
    return n + 1


@shared_task(bind=True, autoretry_for=(HTTPError,), retry_backoff=True, max_retries=3)  # ok: IDM201 no status error leaves the task: its handler retries it
def import_by_hand(self, url):
    try:
        response = requests.get(url, timeout=5)
        response.raise_for_status()
        return response.json()
    except HTTPError as exc:  # expect: IDM201 "the Celery task's handler retries the status error (requests.exceptions.HTTPError)"
        self.retry(exc=exc, countdown=random.uniform(5, 15))
