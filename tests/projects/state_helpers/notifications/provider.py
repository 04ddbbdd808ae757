import requests


def send_sms(to, body):
    return requests.post("https://sms.example.com/send", json={"to": to, "body": body}, timeout=5)
