"""Look rules up by code or name and resolve --select/--ignore."""

from __future__ import annotations

from collections.abc import Iterable

from idemlint.rule import Rule
from idemlint.rules import ALL_RULES

# Findings the engine itself reports; they have no rule class.
PARSE_ERROR = "IDM900"
UNUSED_SUPPRESSION = "IDM800"
RESERVED = {
    PARSE_ERROR: ("parse-error", "The file could not be read or parsed, so it was not checked."),
    UNUSED_SUPPRESSION: ("unused-suppression", "A `# noqa: IDM...` comment suppresses no finding on its line."),
}


def all_codes() -> list[str]:
    return sorted([rule.code for rule in ALL_RULES] + list(RESERVED))


def rule_by_code_or_name(key: str) -> type[Rule] | None:
    key = key.strip()
    for rule in ALL_RULES:
        if rule.code == key.upper() or rule.name == key.lower():
            return rule
    return None


def validate_codes(codes: Iterable[str]) -> list[str]:
    """Codes or prefixes that match no rule (so a typo in --select is an error, not silence)."""
    known = all_codes()
    return [c for c in codes if c.upper() != "ALL" and not any(k.startswith(c.upper()) for k in known)]


def _matches(code: str, patterns: Iterable[str]) -> int:
    """Length of the longest pattern that selects `code` (0 = none); longer wins, as in ruff."""
    best = 0
    for pattern in patterns:
        pattern = pattern.upper()
        if pattern == "ALL":
            best = max(best, 1)
        elif code.startswith(pattern):
            best = max(best, len(pattern) + 1)
    return best


def is_enabled(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    select = tuple(select) or ("ALL",)
    selected, ignored = _matches(code, select), _matches(code, ignore)
    return selected > 0 and selected > ignored


def enabled_rules(select: Iterable[str], ignore: Iterable[str]) -> list[type[Rule]]:
    select, ignore = tuple(select), tuple(ignore)
    return [rule for rule in ALL_RULES if is_enabled(rule.code, select, ignore)]
