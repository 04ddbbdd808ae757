"""What a retry context is (the words that name an attempt counter: idemlint.knowledge.retries)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True, eq=False)
class RetryContext:
    """Code that runs again on each attempt.

    kind: "loop" (hand-written), "iterator" (tenacity `Retrying`, `stamina.retry_context`),
    "decorator" (the decorated function's body), "task" (a task queue re-runs the body),
    "recursive" (a function that calls itself on failure), "callable" (a lambda or function
    handed to a helper that calls it once per attempt: `with_retries(lambda: ...)`,
    `tenacity.Retrying(...)(fn)`), "poll" (a polling loop: not a retry, and no retry rule judges it).
    """

    kind: str
    library: str
    node: cst.CSTNode  # the loop, or the FunctionDef (or Lambda) whose body is retried
    anchor: cst.CSTNode  # where policy findings are reported: decorator, loop header, helper call
    config: cst.Call | None  # the decorator or iterator call carrying the policy, if any
    label: str  # how messages name it: "@tenacity.retry", "retry loop", "Celery task", "with_retries()"
    # goes round only after the server turned the attempt away (a 429): a repeat cannot act twice
    refused_only: bool = False
    # goes round only for work the code itself deems safe to repeat (`if op in NON_IDEMPOTENT:
    # raise` in its handler): a repeat of a non-idempotent call is refused by the code
    idempotent_only: bool = False
    # a recursive retry whose failure handler calls a helper that calls the function again
    # (`_retry_request` waits, then `return self._request(..., remaining_retries=remaining)`)
    by_way_of: cst.FunctionDef | None = None
    # the task's handlers no failure reaches (`retry/reach.py`): a `self.retry()` there never runs
    dead_handlers: frozenset[cst.CSTNode] = frozenset()
    # a decorator bound in another module (`@api_retry` imported): its policy is judged there
    settings_elsewhere: bool = False

    @property
    def repeats_safely(self) -> bool:
        """No repeat can do the work twice: the server refused it, or the code retries only what it deems idempotent."""
        return self.refused_only or self.idempotent_only

    def describe(self, line: int | None = None) -> str:
        return f"{self.label} on line {line}" if line else self.label

    @property
    def named(self) -> str:
        """How a sentence names it: "the retry loop", "the @tenacity.retry"; a helper by its
        call, "with_retries()" ("on every attempt of with_retries() on line 12")."""
        return self.label if self.kind == "callable" else f"the {self.label}"
