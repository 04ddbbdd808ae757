"""The catalogue's words with a project's own added: the one place the configuration's
extension points (`state-columns`, `key-names`/`key-headers`, `side-effect-calls`,
`idempotent-calls`) reach, so each reaches every analysis that asks.

A `Vocabulary` travels with the model of each module (`ModuleModel.vocabulary`); analyses
ask it, not the configuration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from idemlint.knowledge.states import OUTCOME_COLUMNS, SETTER_VERBS, STATE_COLUMN_SHAPE, STATE_COLUMNS, STATE_SETTER


@dataclass(frozen=True)
class Vocabulary:
    state_columns: frozenset[str] = STATE_COLUMNS  # the catalogue's and the configured ones, lower-cased
    key_names: tuple[str, ...] = ()  # key names and key headers, as configured
    side_effect_calls: tuple[str, ...] = ()
    idempotent_calls: tuple[str, ...] = ()
    # derived from `state_columns` when built
    _extra_setter: re.Pattern[str] | None = field(init=False, compare=False, repr=False)
    _outcome: re.Pattern[str] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        extra = sorted(map(re.escape, self.state_columns - STATE_COLUMNS))
        setter = rf"^({'|'.join(SETTER_VERBS)})_({'|'.join(extra)})$" if extra else None
        outcome = rf"(^|[._])({'|'.join(sorted(map(re.escape, self.state_columns | OUTCOME_COLUMNS)))})$"
        object.__setattr__(self, "_extra_setter", re.compile(setter, re.IGNORECASE) if setter else None)
        object.__setattr__(self, "_outcome", re.compile(outcome))

    def is_state_column(self, column: str) -> bool:
        """By name (`status`, a configured column) or by shape (`payment_status`)."""
        return column in self.state_columns or STATE_COLUMN_SHAPE.match(column) is not None

    def is_state_setter(self, name: str) -> bool:
        """`set_status`, `markState`, and `set_<column>` for a configured column."""
        return STATE_SETTER.match(name) is not None or (
            self._extra_setter is not None and self._extra_setter.match(name) is not None
        )

    def declared_idempotent(self, name: str, dotted: str) -> bool:
        """A call the project declares safe to repeat (`idempotent-calls`)."""
        return _declared(name, dotted, self.idempotent_calls)

    def declared_side_effect(self, name: str, dotted: str) -> bool:
        """A call the project declares to act outside (`side-effect-calls`)."""
        return _declared(name, dotted, self.side_effect_calls)

    def records_an_outcome(self, name: str | None) -> bool:
        """`order.status`, `payment_status`, `self.result`: a name whose last word is a state
        or outcome column."""
        return name is not None and self._outcome.search(name) is not None


def _declared(name: str, dotted: str, patterns: tuple[str, ...]) -> bool:
    """`billing.client.Client.charge` matches that name, or any `<x>.client.charge(...)`."""
    for pattern in patterns:
        if pattern in (name, dotted):
            return True
        tail = pattern.lower().split(".")[-2:]
        if len(tail) == 2 and dotted.lower().split(".")[-2:] == tail:
            return True
    return False


@lru_cache(maxsize=32)
def vocabulary(
    state_columns: tuple[str, ...] = (),
    key_names: tuple[str, ...] = (),
    side_effect_calls: tuple[str, ...] = (),
    idempotent_calls: tuple[str, ...] = (),
) -> Vocabulary:
    """The catalogue extended by a configuration's additions (one object per configuration)."""
    columns = STATE_COLUMNS | {c.lower() for c in state_columns}
    return Vocabulary(columns, key_names, side_effect_calls, idempotent_calls)


DEFAULT = vocabulary()
