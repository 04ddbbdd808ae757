import requests


class PspClient:
    def refund(self, payment_id, amount):
        return self._request("POST", f"/payments/{payment_id}/refunds", {"amount": amount})

    def _request(self, method, path, body):
        return requests.post("https://psp.example" + path, json=body, timeout=10)


psp = PspClient()
