"""Every rule, in code order. One line here per rule; codes are never reused."""

from __future__ import annotations

from idemlint.rule import Rule
from idemlint.rules.keys import ClockInKey, ContentHashKey, KeyRegeneratedPerAttempt

ALL_RULES: tuple[type[Rule], ...] = (
    KeyRegeneratedPerAttempt,
    ClockInKey,
    ContentHashKey,
)
