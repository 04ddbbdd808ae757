"""The words of an idempotency key: what names one, and what values are unfit for one.

Key names (a keyword, a header, a variable), the calls that make a fresh random value or
read the clock, the digests and serialisers a content hash is made of, and the names that
hold a request's content or an identifier.
"""

from __future__ import annotations

import re


def normalise(name: str) -> str:
    """`Idempotency-Key`, `idempotency_key` and `IdempotencyKey` all become `idempotencykey`."""
    return re.sub(r"[-_\s]", "", name).lower()


# Exact key names (normalised) that act as idempotency keys wherever they appear.
KEY_NAMES = frozenset(
    normalise(n)
    for n in (
        "idempotency_key",
        "Idempotency-Key",
        "X-Idempotency-Key",
        "idempotency_token",
        "dedup_id",
        "dedupe_id",
        "deduplication_id",
        "MessageDeduplicationId",
        "client_token",
        "ClientToken",
        "client_request_token",
        "ClientRequestToken",
        "X-Request-Id",
    )
)
# `request_id` is a key only when it is sent to another system; as a log field it is not.
REQUEST_ID_NAMES = frozenset({"requestid"})
# Variable and attribute names that say "this holds a key".
KEY_VARIABLE = re.compile(r"idempotency|idem_key|idemkey|dedup_key|dedupe_key|dedupkey", re.IGNORECASE)

RANDOM_CALLS = {
    "uuid.uuid1": "uuid.uuid1()",
    "uuid.uuid4": "uuid.uuid4()",
    "uuid.uuid6": "uuid.uuid6()",
    "uuid.uuid7": "uuid.uuid7()",
    "uuid6.uuid7": "uuid6.uuid7()",
    "uuid_utils.uuid4": "uuid_utils.uuid4()",
    "uuid_utils.uuid7": "uuid_utils.uuid7()",
    "os.urandom": "os.urandom()",
    "ulid.new": "ulid.new()",
    "ulid.ULID": "ulid.ULID()",
    "ulid.ulid": "ulid.ulid()",
    "nanoid.generate": "nanoid.generate()",
    "shortuuid.uuid": "shortuuid.uuid()",
    "bson.ObjectId": "bson.ObjectId()",
    "bson.objectid.ObjectId": "bson.ObjectId()",
}
RANDOM_PREFIXES = ("secrets.token_", "random.", "numpy.random.")
CLOCK_CALLS = {
    "time.time",
    "time.time_ns",
    "time.monotonic",
    "time.monotonic_ns",
    "time.perf_counter",
    "time.perf_counter_ns",
    "datetime.datetime.now",
    "datetime.datetime.utcnow",
    "datetime.datetime.today",
    "datetime.date.today",
    "datetime.now",
    "datetime.utcnow",
    "datetime.today",
    "date.today",
    "django.utils.timezone.now",
    "timezone.now",
    "arrow.now",
    "arrow.utcnow",
    "pendulum.now",
    "pendulum.today",
    "uuid.uuid1",
}
DIGEST_PREFIXES = ("hashlib.", "xxhash.", "mmh3.", "blake3.")
# Serialisers whose output is "the whole request": hashing it makes a content hash.
SERIALISERS = {
    "json.dumps",
    "orjson.dumps",
    "ujson.dumps",
    "simplejson.dumps",
    "rapidjson.dumps",
    "repr",
    "pickle.dumps",
    "urllib.parse.urlencode",
    "urlencode",
    "msgpack.packb",
    "yaml.dump",
    "yaml.safe_dump",
}
SERIALISER_METHODS = {
    "model_dump_json",
    "json",
    "dict",
    "to_dict",
    "model_dump",
    "SerializeToString",
    "to_json",
    "dumps",
    "items",
}
CONTENT_NAMES = {
    "payload",
    "body",
    "data",
    "params",
    "request_data",
    "json",
    "json_body",
    "json_data",
    "content",
    "message",
    "msg",
    "kwargs",
    "form",
    "form_data",
    "request_body",
    "event",
    "req",
    "request",
    "fields",
    "query",
    "args",
    "attrs",
    "values",
    "contents",
    "blob",
    "raw",
    "raw_body",
    "post_data",
    "request_json",
    "document",
    "record",
}
DIGEST_CALLS = {
    "hash",
    "uuid.uuid3",
    "uuid.uuid5",
    "zlib.crc32",
    "zlib.adler32",
    "binascii.crc32",
    "hmac.new",
    "hmac.digest",
}

SENDING_CALLS = re.compile(
    r"(^|\.)(post|put|patch|request|send|send_message|send_message_batch|publish|publish_batch|create|capture|"
    r"charge|refund|transfer|enqueue|delay|apply_async|invoke|call|execute|put_item|put_record|put_events)$"
)
BODY_KEYWORDS = ("json", "data", "body", "params", "content", "payload", "MessageBody", "Message", "Body")
IDENTIFIER = re.compile(r"(^|_)(id|pk|uuid|guid|key|number|no|ref|reference|code|sku|slug|token)$", re.IGNORECASE)
