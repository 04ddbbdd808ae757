import requests


class Mailer:
    pass


mailer = Mailer()


def send(address, body):
    return requests.post("https://mail.example/messages", json={"to": address, "body": body}, timeout=5)
