"""State columns and the methods that set them: one definition for every analysis."""

from __future__ import annotations

import re

# the columns whose value is a record's place in its lifecycle (the `state-columns` option adds more)
STATE_COLUMNS = frozenset({"status", "state", "stage", "phase", "step"})
# the verbs of a method named for setting one (`set_status`, `mark_state`)
SETTER_VERBS = ("set", "change", "update", "mark")

_WORDS = "|".join(sorted(STATE_COLUMNS))
_VERBS = "|".join(SETTER_VERBS)
# a method named for setting a state: `set_status`, `change_status`,
# `update_subscription_status`, `mark_state`, `setStatus`
STATE_SETTER = re.compile(rf"^({_VERBS})_?(\w+_)?({_WORDS})$", re.IGNORECASE)
# the bytes a file that defines one holds (the project index reads only such files' ASTs)
STATE_SETTER_DEFINITION = re.compile(rf"def\s+({_VERBS})_?\w*({_WORDS})\s*\(".encode(), re.IGNORECASE)
# a state machine's own move (`job.transition_to(FAILED)`): it records a state, but the machine
# may check the move itself, so it is not taken for an unguarded write
STATE_TRANSITION = re.compile(r"^transition(_to)?$", re.IGNORECASE)
# SQL text that writes a state: `UPDATE jobs SET status = 'failed'`
SQL_STATE_WRITE = re.compile(rf"\bSET\b.*?\b({_WORDS})\s*=\s*'(\w+)'", re.IGNORECASE | re.DOTALL)
