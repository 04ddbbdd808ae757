"""Payment and messaging SDKs: their packages, client classes, and the calls that act."""

from __future__ import annotations

from idemlint.knowledge.http import CLIENT_FACTORIES, HTTP_MODULES, SOCKET

# the methods of a payment or messaging SDK that change something at the provider
SDK_VERBS = {
    "create",
    "capture",
    "confirm",
    "charge",
    "refund",
    "transfer",
    "payout",
    "pay",
    "send",
    "sale",
    "submit_for_settlement",
    "credit",
    "authorise",
    "authorize",
    "payments",
    "refunds",
    "create_payment",
    "create_refund",
    "create_payout",
    "create_transfer",
    "create_charge",
    "create_order",
    "create_invoice",
    "refund_payment",
    "complete_payment",
    "send_campaign_message",
    "send_canvas_message",
}
# Not sendgrid: it takes no idempotency key, and on real code (saleor) every retried send
# was retried only on errors raised before the request left (measured: 0 of 16 right).
SDK_PACKAGES = {
    "twilio": "twilio",
    "stripe": "stripe",
    "braintree": "braintree",
    "Adyen": "adyen",
    "adyen": "adyen",
    "square": "square",
    "squareup": "square",
    "paypalrestsdk": "paypal",
    "mollie": "mollie",
    "razorpay": "razorpay",
}
SDK_CLIENTS = {
    "stripe.StripeClient": "stripe",
    "braintree.BraintreeGateway": "braintree",
    "Adyen.Adyen": "adyen",
    "square.client.Client": "square",
    "square.Square": "square",
    "razorpay.Client": "razorpay",
    "twilio.rest.Client": "twilio",
    "mollie.api.client.Client": "mollie",
    "braze.client.BrazeClient": "braze",  # edx-braze-client: campaign and Canvas sends take no key
}
# SDKs whose resource objects carry the request key (paypalrestsdk's PayPal-Request-Id is made
# once per object), and their verbs beyond SDK_VERBS
SDK_OBJECT_PACKAGES = {"paypalrestsdk": "paypal"}
SDK_OBJECT_VERBS = {"execute": ("execute",), "void": ("void",)}
# queue sends that a FIFO queue deduplicates by MessageDeduplicationId
FIFO_MESSAGING_CALLS = {"send_message", "send_message_batch", "publish", "publish_batch"}

# the words that name an SDK in a source file (the pre-filter's): each package, and each
# client's top-level package
SDK_WORDS = tuple(sorted({name.lower() for name in SDK_PACKAGES} | {c.split(".")[0].lower() for c in SDK_CLIENTS}))

# SDKs that retry by themselves, adding their own idempotency keys: the module setting and the
# client class whose keyword turn it on
SELF_RETRYING_SDKS = {"stripe": ("stripe.max_network_retries", "stripe.StripeClient", "max_network_retries")}
# AWS's SDK: its FIFO queue and topic sends are deduplicated by `MessageDeduplicationId`
AWS_SDK = "boto3"
# BigQuery's streaming insert: without `row_ids` the client makes fresh insert ids on each call
BIGQUERY = "bigquery"
BIGQUERY_MODULE = "google.cloud.bigquery"
BIGQUERY_INSERTS = ("insert_rows_json", "insert_rows")

# Every package whose import says "this module calls another system": HTTP clients and SDKs.
REMOTE_PACKAGES = tuple(
    sorted(
        {module.split(".")[0] for module in HTTP_MODULES}
        | set(CLIENT_FACTORIES.values())
        | set(SDK_PACKAGES)
        | {client.split(".")[0] for client in SDK_CLIENTS}
        | {AWS_SDK, SOCKET}
    )
)
