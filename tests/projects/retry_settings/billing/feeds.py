"""Retry decorators on a thread's `run()`: repeating it restarts the feed, a supervisor, and
retrying forever is the design (nothing waits for its answer; giving up leaves the feed dead).
The thread class is known through a base another module defines (this module itself
shows the project index nothing it summarises). Tricky negative's twin: a
command whose `run()` sends one request is retried like any function."""

from tenacity import retry, wait_exponential

from billing.feed_base import BaseCommand, BaseFeed


class PriceFeed(BaseFeed):
    @retry(wait=wait_exponential(multiplier=1, min=2, max=60))  # ok: IDM201, IDM202, IDM203 a supervisor restarts the feed
    def run(self) -> None:
        stream = self.client.open_stream()
        stream.start()


class QuoteFeed(PriceFeed):
    @retry(wait=wait_exponential(multiplier=1, min=2, max=60))  # ok: IDM201, IDM202, IDM203 a thread through a class of this module
    def run(self) -> None:
        self.client.open_stream("quotes").start()


class RefundCommand(BaseCommand):
    @retry(wait=wait_exponential(multiplier=1, min=2, max=60))  # expect: IDM201, IDM202, IDM203
    def run(self, refund_id):
        return self.client.get(f"/refunds/{refund_id}")
