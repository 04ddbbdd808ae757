import requests


class Core:
    def __init__(self):
        self.session = requests.Session()

    def _request(self, method, path, body=None):
        return self.session.request(method, "https://api.example" + path, json=body, timeout=5)

    def create(self, body):
        return self._request("POST", "/things", body)

    def fetch(self, thing_id):
        return self._request("GET", f"/things/{thing_id}")


def http_request(verb, url, body=None):
    return requests.request(verb, url, json=body, timeout=5)


def send(url, body=None, verb="POST"):
    return requests.request(verb, url, json=body, timeout=5)


def read(url, verb="get"):
    return requests.request(verb, url, timeout=5)


def forward_default(url, body, verb="PATCH"):
    return http_request(verb, url, body)
