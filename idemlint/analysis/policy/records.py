"""The records a retry policy is read into: one `Policy` per retry context, one `Verdict` per problem.

A verdict is data, not prose: what is wrong (`kind`), in which kind of policy (`source`), the
node to report at, and the facts a message needs. The rules word it
(`idemlint/rules/retry_policy.py` and `unbounded_retry.py` hold every message, keyed by kind and source).

| list | rule | kinds |
| --- | --- | --- |
| `catches_all` | IDM201 | `no-filter`, `catch-all`, `catch-all-default`, `catch-all-handler` |
| `non_retryable_statuses` | IDM201 | `non-retryable-status`, `status-error-class`, `unsafe-methods` |
| `no_jitter` | IDM202 | `no-wait`, `fixed-wait`, `jitter-off` |
| `unbounded` | IDM203 | `no-bound`, `stop-never`, `endless-count` |

Sources: `loop` (hand-written, `loops`), `tenacity` and `retrying` (`tenacity`),
`backoff`, `stamina` and `retry` (`backoff`), `celery` (the task's settings) and `celery-call`
(a `.retry()` call, `celery`), `urllib3` (a `Retry(...)` object, `urllib3`), `helper` (a call in a
retry loop to a function that sleeps a fixed delay, from its summary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.edits import FixPlan
    from idemlint.analysis.retry import RetryContext
    from idemlint.analysis.summaries import Callee, Chain


@dataclass(frozen=True)
class Verdict:
    kind: str  # what is wrong: "catch-all", "fixed-wait", "no-bound", ... (table above)
    source: str  # what kind of policy says so: "loop", "tenacity", "celery-call", "urllib3", ...
    node: cst.CSTNode  # where the finding is reported
    label: str = ""  # the retry context's own name ("@retry", "Retrying(...) loop"), when it has one
    statuses: tuple[int, ...] = ()  # non-retryable-status: the HTTP statuses retried, in order
    caught: str = ""  # catch-all-handler in a loop: the class caught, as spelled ("" for a bare except)
    methods: tuple[str, ...] = ()  # unsafe-methods: the non-idempotent methods named (none: every method)
    owner: str = ""  # celery-call: the object whose `.retry()` is called
    fix: FixPlan | None = None
    callee: Callee | None = None  # helper: the function called, and how it reaches the sleep
    chain: Chain | None = None
    lines: tuple[tuple[str, cst.CSTNode], ...] = ()  # other nodes the message names by line ($name)
    setting: str = ""  # retry-class: the jitter parameter left at its default


@dataclass
class Policy:
    context: RetryContext | None  # None for a urllib3 Retry object and a task object's .retry()
    anchor: cst.CSTNode  # the loop line or decorator that messages about a loop name ("$context")
    catches_all: list[Verdict]  # IDM201: retries every exception
    non_retryable_statuses: list[Verdict]  # IDM201: retries what a retry cannot fix
    no_jitter: list[Verdict]  # IDM202: waits with no random part
    unbounded: list[Verdict]  # IDM203: no attempt limit and no deadline

    @classmethod
    def empty(cls, context: RetryContext | None, anchor: cst.CSTNode) -> Policy:
        return cls(context, anchor, [], [], [], [])
