"""Receipts sent through a messaging provider from Celery tasks."""

from __future__ import annotations

import uuid

import boto3
from celery import shared_task

sqs = boto3.client("sqs")
QUEUE = "https://sqs.eu-west-1.amazonaws.com/123456789012/receipts.fifo"


@shared_task(bind=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=5)
def send_receipt(self, order_id: str) -> None:
    """BUG: every task retry enqueues the receipt again under a new deduplication id."""
    sqs.send_message(
        QueueUrl=QUEUE,
        MessageBody=order_id,
        MessageGroupId=order_id,
        MessageDeduplicationId=uuid.uuid4().hex,
    )


@shared_task(bind=True, autoretry_for=(ConnectionError,), retry_backoff=True, max_retries=5)
def send_receipt_fixed(self, order_id: str) -> None:
    sqs.send_message(
        QueueUrl=QUEUE,
        MessageBody=order_id,
        MessageGroupId=order_id,
        MessageDeduplicationId=f"receipt-{order_id}",
    )
