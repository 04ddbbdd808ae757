"""State columns and the methods that set them: one definition for every analysis."""

from __future__ import annotations

import re

# the columns whose value is a record's place in its lifecycle (the `state-columns` option adds more)
STATE_COLUMNS = frozenset({"status", "state", "stage", "phase", "step"})
# a record's main state: a precondition on it carries the companion states one write moves with
# it (`rollback_status` saved with `status`)
PRIMARY_STATES = frozenset({"status", "state"})
# a state column named for what it tracks: `payment_status`, `delivery_state`, `review_stage`;
# not a postal state (`billing_state`, `shipping_state`: an address field)
STATE_COLUMN_SHAPE = re.compile(
    r"^(?!(billing|shipping|mailing|home|postal|address|residence|birth|origin|destination|us)_)\w+_(status|state|stage|phase)$"
)
# the verbs of a method named for setting one (`set_status`, `mark_state`)
SETTER_VERBS = ("set", "change", "update", "mark")

_WORDS = "|".join(sorted(STATE_COLUMNS))
_VERBS = "|".join(SETTER_VERBS)
# the state words a setter's name ends with: not `step` (`set_step` is a wizard's, rarely a record's)
_SET_WORDS = "|".join(sorted(STATE_COLUMNS - {"step"}))
_CAMEL_WORDS = "|".join(word.capitalize() for word in sorted(STATE_COLUMNS - {"step"}))
# a method named for setting a state: `set_status`, `change_status`, `update_subscription_status`,
# `mark_state`, `setStatus`, `updateOrderStatus`. The verb is a word of its own (an underscore
# or a capital follows it): `setup_status`, `market_status`, `updated_state` are not setters.
STATE_SETTER = re.compile(rf"^({_VERBS})_(\w+_)?({_SET_WORDS})$|^({_VERBS})([A-Z]\w*)?({_CAMEL_WORDS})$")
# the bytes a file that defines one holds (the project index reads only such files' ASTs)
STATE_SETTER_DEFINITION = re.compile(
    rf"def\s+(({_VERBS})_\w*({_SET_WORDS})|({_VERBS})([A-Z]\w*)?({_CAMEL_WORDS}))\s*\(".encode()
)
# a state machine's own move (`job.transition_to(FAILED)`): it records a state, but the machine
# may check the move itself, so it is not taken for an unguarded write
STATE_TRANSITION = re.compile(r"^transition(_to)?$", re.IGNORECASE)
# SQL text that writes a state: `UPDATE jobs SET status = 'failed'`
# (the gap after SET is bounded: an unbounded lazy gap is quadratic on a long literal)
SQL_STATE_WRITE = re.compile(rf"\bSET\b[^;]{{0,400}}?\b({_WORDS})\s*=\s*'(\w+)'", re.IGNORECASE)
# states a record is put in to say it is gone (a soft delete): every state may lead there, so
# writing one with no precondition never moves a record backward
TOMBSTONE_STATES = frozenset({"deleted", "removed"})
# the decorator a state-machine library declares a move with: django-fsm's
# `@transition(field=state, source=[...], target=...)`, viewflow's `@state.transition(...)`
TRANSITION_DECORATOR = "transition"

# A state that records a definite failure (`failed`, `declined`, `cancelled`), an action that
# treats an outcome as one (a refund, a release of stock, a compensating call), an error raised
# for one, and a state that says the outcome is not known yet.
FAILED_STATE_WORDS = ("fail", "declin", "cancel", "reject", "error", "void", "abort")
FAILED_STATE = re.compile("|".join(FAILED_STATE_WORDS), re.IGNORECASE)
FAILURE_ACTION = re.compile(
    r"refund|release|restock|unreserve|cancel|void|rollback|revert|compensat|mark_?\w*fail|fail_|_fail|set_failed|decline|notify\w*fail|send\w*fail|failure",
    re.IGNORECASE,
)
FAILURE_ERROR = re.compile(r"fail|declin|reject", re.IGNORECASE)
UNKNOWN_STATE = re.compile(
    r"unknown|pending|uncertain|indetermin|reconcil|in_?progress|processing|timeout|timed_?out", re.IGNORECASE
)
# the columns a failure is recorded in: a state column, or the outcome of an attempt
OUTCOME_COLUMNS = frozenset({"result", "outcome"})
