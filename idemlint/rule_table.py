"""What a run needs to know of each rule before any file is analysed, without importing one.

The rule classes (idemlint.rules) import the analysis modules, libcst's and sqlglot's users
among them: tens of milliseconds that a warm run (every file served by the cache) never
needs. Selection, the cache's run-wide key and whether the project index is involved need
only each rule's code, name and `needs_project`; they are here, in code order.
tests/test_warm_path_rules.py pins this table to the classes' own fields, so it cannot drift
(and if it did, a warm run would only miss the cache: the real key comes from the classes).
"""

from __future__ import annotations

from typing import NamedTuple


class RuleRow(NamedTuple):
    code: str
    name: str
    needs_project: bool


RULE_TABLE: tuple[RuleRow, ...] = (
    RuleRow("IDM001", "key-regenerated-per-attempt", True),
    RuleRow("IDM002", "clock-in-key", False),
    RuleRow("IDM003", "content-hash-key", False),
    RuleRow("IDM101", "read-decide-write", True),
    RuleRow("IDM102", "ignored-update-count", True),
    RuleRow("IDM103", "non-monotonic-transition", True),
    RuleRow("IDM201", "retry-non-retryable", True),
    RuleRow("IDM202", "retry-without-jitter", True),
    RuleRow("IDM203", "unbounded-retry", True),
    RuleRow("IDM301", "unkeyed-retried-side-effect", True),
    RuleRow("IDM302", "timeout-as-failure", True),
)
