"""Operations whose second run leaves what the first one left, whatever ran in between.

Code that a racing duplicate runs twice does harm only where running it twice differs from
running it once. These names say "no difference" by what they do, in any library."""

from __future__ import annotations

import re

# create-if-absent: `Incident.objects.get_or_create(...)` (and its async form); not
# `update_or_create`, whose `defaults` may be computed from what was read
CREATE_IF_ABSENT_METHODS = frozenset({"get_or_create", "aget_or_create"})
# the first word of a call that looks something up (`search_account_by_email(...)`,
# `api.list_rules()`, `find_user(...)`), when no word of it acts (see ACTING_WORDS): a write sent
# only where such a lookup found nothing is create-if-absent, and a repeat looks first
# the first words of a call that works a value out of what it is given (`select_screenshot_file`):
# a local it fills and only a write reads computes that write's value
COMPUTING_WORDS = frozenset({"select", "choose", "pick", "compute", "calculate", "derive", "determine", "detect"})
# the first words of a call that passes a changed value on (`backend.update_email(user)`): it sets,
# it does not add, so a racing run that passes the same change on sets the same thing
PASSING_ON_WORDS = frozenset({"update", "set", "sync", "change"})
LOOKUP_WORDS = frozenset(
    {"get", "find", "search", "lookup", "list", "fetch", "query", "exists", "read", "download", "count"}
)
# words that say a lookup also takes or makes something: `get_next_number`, `fetchAndLock`,
# `get_or_create`, `get_new_address`, `claim_coupon`
TAKING_WORDS = frozenset(
    {"new", "next", "lock", "claim", "reserve", "allocate", "issue", "acquire", "pop", "and", "or"}
)
# removals of a thing, which stays removed when removed twice (`os.remove`, `shutil.rmtree`,
# `storage.delete(name)`, `qs.delete()`, `helpers.rm_file(path)`, a row's `soft_delete()`, a
# cache cleared: `clear_project_cache(pk)`, a named resource torn down: `drop_database(name)`,
# `delete_swift_container(name)`, `destroy_vm(vm_id)`); not an amount (`remove_coins`), nor a
# thing a verb picks anew each run (`delete_last_message`), nor a verb that only looks like one
# (`drop_ship_order`): the resource must be named
_RESOURCES = (
    r"database|db|schema|table|user|role|bucket|container|volume|instance|vm|server|index|queue|topic|acl|"
    r"policy|key|file|dir|directory|folder|tree|path|blob|object|cache|snapshot|image|dns_record|webhook|subscription"
)
REMOVAL = re.compile(
    r"^(soft_)?(a?delete|remove|unlink|rmtree|rmdir)$"
    rf"|^(a?delete|remove|drop|destroy|deprovision|rm)_(\w+_)?({_RESOURCES})s?$"
    r"|^(clear|invalidate|purge|evict)_(\w+_)?caches?$"
)

# the words of a name that acts on another system (`create_collection`, `chat_postMessage`,
# `orders_create`): a call so named acts even where it computes a value written; not
# `make_password`, `address_for`, `settings_value`
ACTING_WORDS = frozenset(
    {"create", "send", "post", "put", "update", "delete", "remove", "charge", "capture", "refund", "transfer", "submit"}
    | {"publish", "insert", "add"}
)


def words_of(name: str) -> list[str]:
    """A name's words, lower-cased, split at underscores and case changes (`getResource`,
    `fetch_and_lock`, `/listInvoices`)."""
    return [w.lower() for w in re.findall(r"[A-Za-z]+", re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " "))]


def names_an_action(name: str) -> bool:
    """A name with a word of an act in it (`create_invoice`, `refundPayment`, `SNSPublish`: an
    acronym's last capital starts the next word)."""
    return not ACTING_WORDS.isdisjoint(words_of(re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1 \2", name)))


def names_a_read(words: list[str]) -> bool:
    """Words of a name that say it reads, its first or last word a lookup's (`share_instance_get`,
    `retrieve_by_key`, `show_port`), and none names an act, a taking or a change
    (`attach_interface`, `increment_view_count`, `mark_as_read`)."""
    reads = LOOKUP_WORDS | _READING_WORDS
    changes = ACTING_WORDS | TAKING_WORDS | _CHANGING_WORDS
    return bool(words) and (words[0] in reads or words[-1] in reads) and not set(words) & changes


# lookups spelt by other verbs, read as a name's first or last word
_READING_WORDS = frozenset({"retrieve", "show", "describe", "load"})
# what changes the thing a name reads (`increment_view_count`, `mark_as_read`)
_CHANGING_WORDS = (
    frozenset({"increment", "decrement", "incr", "decr", "mark", "set", "save", "reset", "clear", "register"})
    | frozenset({"assign", "claim", "lock", "acquire", "attach", "detach", "start", "stop", "enable", "disable"})
    | frozenset({"apply", "place", "process", "execute", "run", "settle", "book", "reserve"})
)


def names_a_lookup(words: list[str]) -> bool:
    """Words of a name (`search_accounts`, `get_shared_link_file`) that say it only looks up:
    the first names a lookup, and none names an act or a taking."""
    return bool(words) and words[0] in LOOKUP_WORDS and not set(words) & (ACTING_WORDS | TAKING_WORDS)
