"""Tasks only a periodic schedule starts: a Celery beat entry names them (`"task":
"shop.tasks.sync_stock"`, in the settings or `app.conf.beat_schedule`, or `@periodic_task`
decorates them) and no code of the project queues them (`sync_stock.delay(...)`,
`.apply_async`, a signature, `partial(sync_stock.delay, pk)`, `send_task("...sync_stock")`,
also under a name it is imported as). One run starts per tick, so a
retry's fixed countdown has no cohort of runs to spread: IDM202 reports it at `low`.

Facts are read by regular expressions from each file's bytes, then joined by short name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# per file: (the task names a schedule names, the task names code queues)
ScheduleFacts = tuple[frozenset[str], frozenset[str]]
NO_SCHEDULE_FACTS: ScheduleFacts = (frozenset(), frozenset())

# a beat entry's task, by its dotted name: `"task": "shop.tasks.sync_stock"`
_SCHEDULED = re.compile(rb"""["']task["']\s*:\s*["']([\w.]+)["']""")
# a decorator that runs a task on a schedule, and the `def` a few lines below it
_PERIODIC = re.compile(rb"^[ \t]*@(?:[\w.]+\.)?periodic_task\b", re.MULTILINE)
_DEF = re.compile(rb"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)", re.MULTILINE)
# a task queued, or made into a signature something may queue, called or handed on
# (`partial(sync_stock.delay, pk)`)
_QUEUED = re.compile(rb"\b(\w+)\s*\.\s*(?:delay|apply_async|s|si|signature|map|starmap|chunks)\b")
_SENT = re.compile(rb"""\bsend_task\s*\(\s*["']([\w.]+)["']""")
# a name bound under another (`from shop.tasks import sync_stock as sync`): queueing the alias queues it
_ALIAS = re.compile(rb"\b(\w+)[ \t]+as[ \t]+(\w+)\b")


def schedule_facts(source: bytes) -> ScheduleFacts:
    """The task names this file schedules and those it queues (by any name it binds them to)."""
    if b"task" not in source:
        return NO_SCHEDULE_FACTS
    scheduled = {name.rsplit(b".", 1)[-1].decode() for name in _SCHEDULED.findall(source)}
    for decorator in _PERIODIC.finditer(source):
        below = _DEF.search(source, decorator.end(), decorator.end() + 2000)
        if below is not None:
            scheduled.add(below.group(1).decode())
    queued = {name.decode() for name in _QUEUED.findall(source)}
    queued |= {name.rsplit(b".", 1)[-1].decode() for name in _SENT.findall(source)}
    queued |= {original.decode() for original, alias in _ALIAS.findall(source) if alias.decode() in queued}
    return frozenset(scheduled), frozenset(queued)


def periodic_only(files: Iterable[ScheduleFacts]) -> frozenset[str]:
    """The task names some schedule names and no code of the project queues."""
    scheduled: set[str] = set()
    queued: set[str] = set()
    for named, sent in files:
        scheduled |= named
        queued |= sent
    return frozenset(scheduled - queued)
