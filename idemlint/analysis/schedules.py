"""Tasks only a periodic schedule starts: a Celery beat entry names them (`"task":
"shop.tasks.sync_stock"`, in the settings or `app.conf.beat_schedule`, or `@periodic_task`
decorates them) and no code of the project queues them (`sync_stock.delay(...)`,
`.apply_async`, a signature, `send_task("...sync_stock")`). One run starts per tick, so a
retry's fixed countdown has no cohort of runs to spread: IDM202 reports it at `low`.

Facts are read by regular expressions from each file's bytes, then joined by short name.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# per file: (the task names a schedule names, the task names code queues)
ScheduleFacts = tuple[frozenset[str], frozenset[str]]
NO_SCHEDULE_FACTS: ScheduleFacts = (frozenset(), frozenset())

# a beat entry's task, by its dotted name: `"task": "shop.tasks.sync_stock"`, `task="..."`
_SCHEDULED = re.compile(rb"""["']task["']\s*:\s*["']([\w.]+)["']|\btask\s*=\s*["']([\w.]+)["']""")
# a task decorated to run on a schedule
_PERIODIC = re.compile(
    rb"@(?:[\w.]+\.)?periodic_task\b[^\n]*\n(?:[ \t]*@[^\n]*\n)*[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)"
)
# a task queued, or made into a signature that something may queue
_QUEUED = re.compile(rb"\b(\w+)\s*\.\s*(?:delay|apply_async|s|si|signature|map|starmap|chunks|apply)\s*\(")
_SENT = re.compile(rb"""\bsend_task\s*\(\s*["']([\w.]+)["']""")


def schedule_facts(source: bytes) -> ScheduleFacts:
    """The task names this file schedules and those it queues."""
    if b"task" not in source:
        return NO_SCHEDULE_FACTS
    scheduled = {(a or b).rsplit(b".", 1)[-1].decode() for a, b in _SCHEDULED.findall(source)}
    scheduled |= {name.decode() for name in _PERIODIC.findall(source)}
    queued = {name.decode() for name in _QUEUED.findall(source)}
    queued |= {name.rsplit(b".", 1)[-1].decode() for name in _SENT.findall(source)}
    return frozenset(scheduled), frozenset(queued)


def periodic_only(files: Iterable[ScheduleFacts]) -> frozenset[str]:
    """The task names some schedule names and no code of the project queues."""
    scheduled: set[str] = set()
    queued: set[str] = set()
    for named, sent in files:
        scheduled |= named
        queued |= sent
    return frozenset(scheduled - queued)
