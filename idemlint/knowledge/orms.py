"""Databases and ORMs: the kinds of write the data rules tell apart, and the ORM calls they read."""

from __future__ import annotations

import re

# a write through an ORM's bulk update: `Order.objects.filter(...).update(...)`, `update(Order)`
DJANGO = "django"
SQLALCHEMY = "sqlalchemy"
# the modules whose sessions write a loaded instance on flush: a module importing one (and not
# Django) writes its instances through SQLAlchemy, and the help names its `update(...).where(...)`
SQLALCHEMY_MODULES = re.compile(r"^(sqlalchemy|flask_sqlalchemy|sqlmodel)(\.|$)")
DJANGO_MODULES = re.compile(r"^django(\.|$)")
# optimistic locking: a model whose ORM writes compare a version column. SQLAlchemy's mapper
# argument, and django-concurrency's version fields (not semantic-version's `VersionField`,
# which stores "1.2.3")
SQLALCHEMY_VERSION_ARGUMENT = "version_id_col"
VERSION_FIELDS = frozenset(
    {"IntegerVersionField", "AutoIncVersionField", "TriggerVersionField", "ConditionalVersionField"}
)
# SQLAlchemy's `Index(..., postgresql_where=...)` and Django's `UniqueConstraint(condition=...)`:
# unique only among the rows the condition picks
PARTIAL_INDEX_ARGUMENT = re.compile(r"^(\w+_where|condition)$")
# a read that fetches one row or fails with a 404
GET_OR_404 = frozenset({"django.shortcuts.get_object_or_404"})
# the modules whose class-based views draw `get_object()` from `get_queryset()` or `queryset`
VIEW_FRAMEWORKS = ("rest_framework.", "django.")
# libraries that store rows, and module paths that name a project's own models: a module that
# imports one holds rows, not a desktop app's objects or a worker's process state
DATABASE_IMPORTS = re.compile(
    r"^(django|sqlalchemy|flask_sqlalchemy|sqlmodel|peewee|pony|tortoise|mongoengine|odmantic|beanie|"
    r"psycopg2?|asyncpg|aiosqlite|sqlite3|pymysql|MySQLdb|records|databases|postgres|frappe)(\.|$)"
    r"|(^|\.)models?(\.|$)"
)
# the base classes of a class whose instances are rows (`models.Model`, `db.Model`, `Document`,
# `Base`), not pydantic's data classes
MODEL_BASE = re.compile(r"(^|\.)(\w*Model|Document|Base)$")
NOT_ROW_BASES = re.compile(r"(^|\.)(BaseModel|RootModel|BaseSettings)$")


def is_row_base(name: str) -> bool:
    """`models.Model`, `db.Model`, `TimeStampedModel`, `Base`: not pydantic's `BaseModel`."""
    return MODEL_BASE.search(name) is not None and NOT_ROW_BASES.search(name) is None


# methods an ORM runs once per move of a document's lifecycle, after checking the move and
# locking the row: frappe runs `on_submit` only as docstatus goes 0 -> 1 and `on_cancel` only as
# it goes 1 -> 2, after `check_if_latest` reads the row FOR UPDATE. A state written there
# follows a move the framework made once: no late or second delivery runs it again.
TRANSITION_HOOKS = {"frappe": frozenset({"before_submit", "on_submit", "before_cancel", "on_cancel"})}

# ORMs whose `save()` of a loaded document writes it only at the version it was read: frappe's
# `Document.save()` reads the row's `modified` FOR UPDATE and raises `TimestampMismatchError`
# where another save came between (`check_if_latest`). Per library: the base class of its
# documents, and the calls that load one. Its `db_set()` and `frappe.db.set_value()` skip it.
VERSION_CHECKED_SAVES = {
    "frappe": ("Document", frozenset({"frappe.get_doc", "frappe.get_last_doc", "frappe.get_cached_doc"}))
}

# what makes a row and gives it back, or stores one made in Python: `Model.objects.create(...)`,
# `serializer.save(...)`, `row.save()` after `row = Model(...)`
MAKES_A_ROW = frozenset({"create", "acreate", "save", "asave"})
# of those, a manager's that insert the row they are given the values of: `Model.objects.create(...)`
CREATES_A_ROW = frozenset({"create", "acreate"})
# how a task queue is handed a call to run later, with its arguments: celery's `task.delay(...)`,
# `task.apply_async(args=...)` and its immutable signature `task.si(...)` (not `task.s(...)`, whose
# first argument in a chain is the previous task's result), dramatiq's `actor.send(...)` and
# `actor.send_with_options(args=..., kwargs=...)`
QUEUES_A_CALL = frozenset({"delay", "apply_async", "si", "send", "send_with_options"})
# of those, the ones handed the call's arguments as a sequence and a mapping (`args=`, `kwargs=`;
# celery's `apply_async` also by position), their own keywords being options
ARGUMENTS_KEYWORDS = frozenset({"apply_async", "send_with_options"})
# a column of a row that names that row alone, handed in place of the row (`export.token`,
# `job.uuid`); one named for another thing (`invite.account_key`, `export.owner_id`) may name
# another row (`order.uid` may be the user's id from an identity provider)
KEY_COLUMN = re.compile(r"^(?:uuid|guid|token|key|slug)$")
# what turns a key handed as text back into one, or the other way (`int(search_id)`,
# `uuid.UUID(token)`): a lookup by it finds the same row
KEY_CONVERSIONS = frozenset({"int", "str", "UUID", "uuid.UUID"})
# an ORM's lookups that give one row or raise: `Model.objects.get(pk=...)`, SQLAlchemy's
# `session.get(Model, pk)`, Django's `get_object_or_404(Model, pk=...)`
ONE_ROW_LOOKUPS = frozenset({"get", "aget", "get_object_or_404", "aget_object_or_404"})
# what is handed a function and the arguments to call it with later, in another thread, process
# or job: (the function's position, or the keyword naming it; the position its own positional
# arguments start from, or None where they come as a sequence; the keyword of that sequence; the
# keyword of a mapping of its keyword arguments). `threading.Thread(target=f, args=(...))`,
# APScheduler's `add_job(f, args=[...])`, `executor.submit(f, ...)`, Starlette's
# `background_tasks.add_task(f, ...)`, `asyncio.to_thread(f, ...)`, `loop.run_in_executor(None,
# f, ...)`, RQ's `queue.enqueue(f, ...)`, `functools.partial(f, ...)`
# (APScheduler's `add_job` only with no trigger or a "date" one: an "interval" or "cron" job runs
# again and again)
RUNS_A_FUNCTION_LATER: dict[str, tuple[int | str, int | None, str, str]] = {
    "Thread": ("target", None, "args", "kwargs"),
    "Process": ("target", None, "args", "kwargs"),
    "add_job": (0, None, "args", "kwargs"),
    "submit": (0, 1, "", ""),
    "add_task": (0, 1, "", ""),
    "to_thread": (0, 1, "", ""),
    "run_in_executor": (1, 2, "", ""),
    "enqueue": (0, 1, "", ""),
    "partial": (0, 1, "", ""),
}

# an ORM's own query methods: a project function of one of these names is not what a caller's
# `x = Model.objects.get(...)` calls
ROW_QUERY_METHODS = frozenset(
    {"get", "first", "last", "earliest", "latest", "filter", "exclude", "all", "one", "one_or_none", "scalar"}
    | {"scalar_one", "scalar_one_or_none", "scalars", "select_related", "prefetch_related", "order_by", "get_object"}
    | {"get_or_create", "update_or_create", "create", "aget", "afirst", "alast", "select_for_update", "using"}
    | {"only", "defer", "annotate", "distinct", "none", "reverse"}
)
# a SQLAlchemy session's legacy query (`db.query(Profile)`): it loads, it changes nothing (not
# `scalar`/`scalars`/`execute`, which run any statement, an INSERT among them)
SESSION_READS = frozenset({"query"})
# a session's calls that run the statement they are given (`session.execute(select(X)...)`): what they
# give is what the statement selects, locked where it locks
STATEMENT_RUNS = frozenset({"execute", "exec", "scalars", "scalar"})
# what a database session is used for: a receiver a function commits, adds or queries through is one
SESSION_WORK = frozenset({"commit", "flush", "add", "add_all", "query", "execute", "delete", "merge"})
# what keeps a record's new values for the next run to read: its own `save()`, its session's
# `commit()` (not `flush()`, which a rollback undoes)
KEEPS_A_RECORD = frozenset({"save", "asave", "commit"})
# query methods that give a count, a truth, a value or an action, not rows
NOT_ROWS = frozenset(
    {"exists", "count", "aggregate", "values", "values_list", "update", "delete", "aexists", "acount"}
    | {"get_or_create", "update_or_create", "aget_or_create", "aupdate_or_create"}  # a (row, created) pair
)
# the query methods whose arguments choose the rows (`filter(state=PENDING)`, `get(pk=pk, status=...)`)
ROW_FILTERS = frozenset({"filter", "filter_by", "where", "get", "aget"})
