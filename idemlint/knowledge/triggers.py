"""Pre-filter vocabulary shared by the rules: words a file must contain for a rule to fire.

Matched as plain substrings of the lower-cased source (faster than one regex). Each rule
combines groups with AND; broad words alone (`update`, `.get(`, `while `) would send most
files of a codebase to the parser, so every rule pairs them with a narrow group.
"""

from __future__ import annotations

from idemlint.knowledge.http import SOCKET_SENDS
from idemlint.knowledge.orms import SQLALCHEMY
from idemlint.knowledge.retries import BACKOFF, STAMINA, TENACITY
from idemlint.knowledge.sdks import SDK_WORDS
from idemlint.knowledge.timeouts import TIMEOUT_EXCEPTIONS

# Something is retried: a retry library, an attempt counter, or a sleep between tries.
RETRY = ("retry", "retries", "retrying", BACKOFF, STAMINA, TENACITY, "attempt", "max_tries", "actor", "sleep(")
# Code that talks to a database.
DATABASE = ("objects.", "execute(", "executemany(", "session", "query(", "cursor", "fetch", "select(", SQLALCHEMY)
# An update: a call (`.update(`, `bulk_update(`, `update(Order)`) or SQL (`UPDATE orders`);
# not `updated_at` and the like.
UPDATE = ("update(", "update ", "update\n", "update\t")
# An insert: `Model.objects.create(...)`, `bulk_create(...)`, `session.add(...)`.
INSERT = ("create(", "session.add(", "session.add_all(")
# A write, also through a helper named for one (`update_payment(payment)`).
DB_WRITE = (*UPDATE, *INSERT, "update_", ".save(", "commit(", "flush(", "_status(", "_state(")
# A model class or a state setter: rows that a function changes without reading them itself.
RECORDS = ("models.model", "db.model", "declarative_base", "_status(", "_state(", "update_fields")
DB_READ = ("select", ".get(", ".first(", "fetch", ".exists(", "[0]", "get_object_or_404", ".one(", "scalar")
# A call to another system: an HTTP write, an SDK's acting verb, a message sent.
EFFECT_WORDS = (
    "insert_rows",
    ".post(",
    ".patch(",
    'post"',
    "post'",
    'patch"',
    "patch'",
    *SDK_WORDS,
    "send_message",
    "publish",
    ".create(",
    "capture",
    "refund",
    "transfer",
    "charge",
    "payout",
    *sorted(f".{verb}(" for verb in SOCKET_SENDS),
)
# a request core handed its method (`client.request(method=method, ...)`): it may send a POST
REQUEST_CORE = ".request("
# urllib3's settings of which methods a `Retry` re-sends: a file that sets them may re-send POST
# at the transport, with no call of its own that acts
TRANSPORT_METHOD_SETTINGS = ("allowed_methods", "method_whitelist")
# An exception that leaves the outcome unknown is caught: the name of one, lower-cased.
_TIMEOUT_NAMES = {"timeout"} | {name.rsplit(".", 1)[-1].lower() for name in TIMEOUT_EXCEPTIONS}
TIMEOUT_WORDS = tuple(sorted(w for w in _TIMEOUT_NAMES if not any(o != w and o in w for o in _TIMEOUT_NAMES)))
