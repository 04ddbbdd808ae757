"""Another service of the same method name, that lets failures out: a call by that bare
name on an unknown receiver may run this one."""

import requests


class PublishRunner:
    def run(self, launch_id):
        requests.post("https://publish.example/go", json={"id": launch_id}, timeout=10)
