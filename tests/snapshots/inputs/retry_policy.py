"""Snapshot input for the retry-policy rules, IDM2xx: each rule once."""

import time

import requests
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential


@retry(stop=stop_after_attempt(5), wait=wait_random_exponential())
def fetch_rates(base):
    return requests.get("https://fx.example/rates", params={"base": base}, timeout=5).json()


def fetch_product(sku):
    for attempt in range(5):
        try:
            return requests.get(f"https://catalog.example/products/{sku}", timeout=5)
        except requests.ConnectionError:
            time.sleep(2**attempt)
    raise RuntimeError("catalog unavailable")


@retry(retry=retry_if_exception_type(requests.ConnectionError), wait=wait_random_exponential())
def fetch_stock(sku):
    return requests.get(f"https://stock.example/{sku}", timeout=5).json()


HANDLERS = [fetch_rates, fetch_product, fetch_stock]  # what the service registers: each function is called
