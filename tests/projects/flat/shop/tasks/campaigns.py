from celery import shared_task
from requests import RequestException

from shop.services.campaigns import CampaignClient, DraftOutbox


@shared_task(autoretry_for=(RequestException,), retry_backoff=True, max_retries=3)
def announce(campaign_id, recipients):
    CampaignClient().send_campaign_message(campaign_id, recipients=recipients)  # expect: IDM301 "CampaignClient.send_campaign_message() makes braze.send_campaign_message()"


@shared_task(autoretry_for=(RequestException,), retry_backoff=True, max_retries=3)
def draft(campaign_id, recipients):
    DraftOutbox().send_campaign_message(campaign_id, recipients)  # ok: IDM301 a class of the project that only shares the SDK's method name


@shared_task(autoretry_for=(RequestException,), retry_backoff=True, max_retries=3)
def announce_optional(campaign_id, recipients):
    from shop.services.optional_campaigns import OptionalCampaignClient

    OptionalCampaignClient().send_campaign_message(campaign_id, recipients=recipients)  # expect: IDM301 "OptionalCampaignClient.send_campaign_message()"
