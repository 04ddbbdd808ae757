import time

from shop.notify.mailer import send


def send_digest(address, body):
    for attempt in range(3):
        try:
            return send(address, body)  # expect: IDM301 "send() makes requests.post()"
        except ConnectionError:
            time.sleep(2**attempt)  # expect: IDM202
