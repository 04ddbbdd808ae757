"""Orders; `take_order` is `claim` re-exported under another name."""

from shop.orders.claims import claim as take_order  # noqa: F401
