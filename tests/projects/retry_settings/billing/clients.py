"""Clients built with the project's retry policies. A policy built with a wait and without
naming its jitter, which defaults to none, makes every client wait the same. Tricky
negatives: the jitter named, no wait at all, a policy whose jitter is on by default, a policy
that draws each wait at random itself (its jitter parameter only adds to that), settings
whose only other default is an access token, and settings the module cannot see."""

from billing.retries import ClientSettings, PaceRetry, RangeRetry, SpreadRetry

DEFAULT_RETRY = PaceRetry(max_retries=4, backoff_factor=0.5)  # expect: IDM202 "PaceRetry(...) sets a wait between attempts but leaves backoff_jitter at its default"
JITTERED_RETRY = PaceRetry(max_retries=4, backoff_factor=0.5, backoff_jitter=1.0)  # ok: IDM202 jitter named
IMMEDIATE_RETRY = PaceRetry(max_retries=1, backoff_factor=0)  # ok: IDM202 no wait to spread
SPREAD_RETRY = SpreadRetry(backoff_factor=0.5)  # ok: IDM202 its jitter is on by default
RANGE_RETRY = RangeRetry(backoff_factor=0.5)  # ok: IDM202 the class draws each wait at random itself
SETTINGS = ClientSettings(backoff_factor=0.5)  # ok: IDM202 an access token is no jitter


def configured_retry(settings):
    return PaceRetry(backoff_factor=0.5, **settings)  # ok: IDM202 the settings may name the jitter
