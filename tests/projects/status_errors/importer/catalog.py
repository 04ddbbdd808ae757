"""A module that only calls the download helpers: it has no request of its own."""

from importer.downloads import fetch_item


def load_product(sku):
    return fetch_item(f"https://catalog.example/products/{sku}")
