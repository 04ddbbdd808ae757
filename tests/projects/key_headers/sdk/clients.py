"""The clients the project builds on its bases: only the billing one names the key header."""

from sdk.base import ApiBase, SignedBase, StreamBase


class BillingClient(ApiBase):
    def __init__(self, base_url):
        super().__init__(base_url)
        self._key_header_name = "Idempotency-Key"


class StreamClient(StreamBase):
    pass


class SignedClient(SignedBase):
    def _extra_headers(self, options):
        return {"Idempotency-Key": options.signed_idempotency_key}
