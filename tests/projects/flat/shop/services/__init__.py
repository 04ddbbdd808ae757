"""The services callers import from the package itself."""

from .campaigns import CampaignClient as CampaignClient
