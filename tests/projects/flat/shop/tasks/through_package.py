from celery import shared_task
from requests import RequestException

from shop import services
from shop.services import CampaignClient


@shared_task(autoretry_for=(RequestException,), retry_backoff=True, max_retries=3)
def announce_imported(campaign_id, recipients):
    CampaignClient().send_campaign_message(campaign_id, recipients=recipients)  # expect: IDM301 "CampaignClient.send_campaign_message()"


@shared_task(autoretry_for=(RequestException,), retry_backoff=True, max_retries=3)
def announce_attribute(campaign_id, recipients):
    services.CampaignClient().send_campaign_message(campaign_id)  # expect: IDM301 "CampaignClient.send_campaign_message()"
