"""The clients the project builds on its bases: only the billing one names the key header."""

from sdk.base import ApiBase, StreamBase


class BillingClient(ApiBase):
    def __init__(self, base_url):
        super().__init__(base_url)
        self._key_header_name = "Idempotency-Key"


class StreamClient(StreamBase):
    pass
