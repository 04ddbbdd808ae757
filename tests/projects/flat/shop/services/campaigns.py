"""In-house wrappers: one extends an SDK client, one only shares its method names."""

from braze.client import BrazeClient


class CampaignClient(BrazeClient):
    def __init__(self):
        super().__init__(api_key="key", api_url="https://rest.example.braze.com", app_id="app")


class DraftOutbox:
    def send_campaign_message(self, campaign_id, recipients):
        self.queued = (campaign_id, recipients)
