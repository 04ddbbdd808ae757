"""Every rule, in code order. One line here per rule; codes are never reused."""

from __future__ import annotations

from idemlint.rule import Rule
from idemlint.rules.data_model import NonMonotonicTransition, ReadDecideWrite
from idemlint.rules.external import TimeoutAsFailure, UnkeyedRetriedSideEffect
from idemlint.rules.keys import ClockInKey, ContentHashKey, KeyRegeneratedPerAttempt
from idemlint.rules.retry_policy import RetryNonRetryable, RetryWithoutJitter
from idemlint.rules.unbounded_retry import UnboundedRetry
from idemlint.rules.update_count import IgnoredUpdateCount

ALL_RULES: tuple[type[Rule], ...] = (
    KeyRegeneratedPerAttempt,
    ClockInKey,
    ContentHashKey,
    ReadDecideWrite,
    IgnoredUpdateCount,
    NonMonotonicTransition,
    RetryNonRetryable,
    RetryWithoutJitter,
    UnboundedRetry,
    UnkeyedRetriedSideEffect,
    TimeoutAsFailure,
)
