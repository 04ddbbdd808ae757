import time


def sleep_ms(ms):
    time.sleep(ms / 1000)
