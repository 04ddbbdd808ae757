"""An SDK that may be missing: the class still extends it when it is installed."""

try:
    from braze.client import BrazeClient
except ImportError:
    BrazeClient = None


class OptionalCampaignClient(BrazeClient or object):
    pass
