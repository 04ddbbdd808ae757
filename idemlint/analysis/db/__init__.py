"""Database reads and writes in one function, across DB-API, Django and SQLAlchemy.

A *write* is an UPDATE (SQL text, `QuerySet.update()`, SQLAlchemy `update()` or
`Query.update()`) or an attribute assignment on a loaded instance that a later
`save()`/`commit()`/`flush()` persists. For each write we record what it sets, what its
WHERE/filter constrains, and whether its row count is read. A *read* is a SELECT, an ORM
`get`/`first`/`[0]`/`exists()`, or `session.get`, with whether it locks the row.

- `records`: `DbRead`, `DbWrite` and the shared vocabulary (method names, column patterns)
- `scopes`: per-scope indexes (source order, names, persisting calls), memoised on the model
- `chains`: method chains, querysets, filters as predicates, kinds of values
- `rowcount`: whether a write's row count is read
- `counts`: whether that count says something a reader must act on (IDM102, summaries)
- `instances`: state setters, persisted attribute assignments, rows a function did not load
- `classify`: `DbAnalysis`, which classifies every call of a file
- `decisions`: which read decides a write, and whether that read is locked
- `side_effects`: whether code acts outside the process
- `races`: IDM101's read-decide-write races
"""

from idemlint.analysis.db.callers import (
    decided_by_its_callers,
    decided_elsewhere,
    first_or_framework_move,
    held_by_callers,
    in_an_admin_action,
    made_by_every_caller,
)
from idemlint.analysis.db.chains import chain_calls
from idemlint.analysis.db.classify import DbAnalysis
from idemlint.analysis.db.counts import count_conditions
from idemlint.analysis.db.decisions import (
    deciding_tests,
    decisions,
    loaded_read,
    moves_its_flag,
    validated_first,
    via_manager,
)
from idemlint.analysis.db.locks import (
    claim_won_before,
    is_locked,
    lock_won_before,
    locked_together,
    saved_at_its_version,
    state_checked_under_a_lock,
)
from idemlint.analysis.db.races import Race, compared_values, races, tested_before
from idemlint.analysis.db.records import (
    ASYNCPG_FETCH,
    CURSOR_FETCH,
    DJANGO_CHAIN,
    DJANGO_READ_TERMINALS,
    EXECUTE_METHODS,
    IDENTITY,
    SA_READ_TERMINALS,
    VERSION_COLUMNS,
    DbRead,
    DbWrite,
)
from idemlint.analysis.db.side_effects import effect_after

__all__ = [
    "count_conditions",
    "ASYNCPG_FETCH",
    "CURSOR_FETCH",
    "DJANGO_CHAIN",
    "DJANGO_READ_TERMINALS",
    "EXECUTE_METHODS",
    "IDENTITY",
    "SA_READ_TERMINALS",
    "VERSION_COLUMNS",
    "DbAnalysis",
    "DbRead",
    "DbWrite",
    "Race",
    "compared_values",
    "tested_before",
    "chain_calls",
    "deciding_tests",
    "state_checked_under_a_lock",
    "decisions",
    "effect_after",
    "is_locked",
    "loaded_read",
    "decided_by_its_callers",
    "first_or_framework_move",
    "decided_elsewhere",
    "in_an_admin_action",
    "held_by_callers",
    "made_by_every_caller",
    "saved_at_its_version",
    "claim_won_before",
    "lock_won_before",
    "locked_together",
    "moves_its_flag",
    "validated_first",
    "via_manager",
    "races",
]
