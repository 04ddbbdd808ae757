"""An operation: builds a POST and hands it to the base class."""

from acme.basesdk import BaseSDK


class Payments(BaseSDK):
    def create(self, amount):
        request = self.client.build_request("POST", "/payments", json={"amount": amount})
        return self.do_request(request)
