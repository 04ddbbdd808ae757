"""The client's retry settings, read by the transport through getters."""

import random


class RetryConfig:
    def __init__(self, max_retries=3, delay_ms=200):
        self.max_retries = max_retries
        self.delay_ms = delay_ms

    def get_delay_ms(self):
        return self.delay_ms

    def get_max_retries(self):
        return self.max_retries


class SpreadConfig:
    def __init__(self, delay_ms=200):
        self.delay_ms = delay_ms

    def get_delay_ms(self):
        return random.uniform(0, self.delay_ms)
