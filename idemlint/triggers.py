"""Pre-filter vocabulary shared by the rules: words a file must contain for a rule to fire.

Matched as plain substrings of the lower-cased source (faster than one regex). Each rule
combines groups with AND; broad words alone (`update`, `.get(`, `while `) would send most
files of a codebase to the parser, so every rule pairs them with a narrow group.
"""

from __future__ import annotations

# Something is retried: a retry library, an attempt counter, or a sleep between tries.
RETRY = ("retry", "retries", "retrying", "backoff", "stamina", "tenacity", "attempt", "max_tries", "actor", "sleep(")
# Code that talks to a database.
DATABASE = ("objects.", "execute(", "executemany(", "session", "query(", "cursor", "fetch", "select(", "sqlalchemy")
# An update: a call (`.update(`, `bulk_update(`, `update(Order)`) or SQL (`UPDATE orders`);
# not `updated_at` and the like.
UPDATE = ("update(", "update ", "update\n", "update\t")
# A write, also through a helper named for one (`update_payment(payment)`).
DB_WRITE = (*UPDATE, "update_", ".save(", "commit(", "flush(", "_status(", "_state(")
# A model class or a state setter: rows that a function changes without reading them itself.
RECORDS = ("models.model", "db.model", "declarative_base", "_status(", "_state(", "update_fields")
DB_READ = ("select", ".get(", ".first(", "fetch", ".exists(", "[0]", "get_object_or_404", ".one(", "scalar")
