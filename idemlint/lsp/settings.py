"""The language server's settings: `initializationOptions` and `didChangeConfiguration`.

`select` and `ignore` (lists of codes or prefixes) replace the configured ones as
`--select`/`--ignore` do, `unsafeFixes` offers unsafe fixes too, and `minConfidence` hides
less sure findings as `--min-confidence` does. Editors spell keys differently, so
camelCase, kebab-case and snake_case are all read; unknown keys are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from idemlint.api import CONFIDENCE_RANK

NAME = "idemlint"


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None  # None: as configured
    ignore: tuple[str, ...] | None = None
    unsafe_fixes: bool = False
    min_confidence: str = "low"  # hide findings less sure than this, as --min-confidence does


def parse_settings(options: object, previous: Settings | None = None) -> Settings:
    """Settings from `initializationOptions` or a `didChangeConfiguration` payload, flat
    (`{"select": [...]}`) or under an `idemlint` key. Unknown keys are ignored."""
    base = previous or Settings()
    if not isinstance(options, dict):
        return base
    nested = options.get(NAME)
    if isinstance(nested, dict):
        options = nested
    unsafe: object = base.unsafe_fixes
    for key in ("unsafeFixes", "unsafe-fixes", "unsafe_fixes"):
        if key in options:
            unsafe = options[key]
    confidence: object = base.min_confidence
    for key in ("minConfidence", "min-confidence", "min_confidence"):
        if key in options:
            confidence = options[key]
    return Settings(
        select=_codes(options["select"]) if "select" in options else base.select,
        ignore=_codes(options["ignore"]) if "ignore" in options else base.ignore,
        unsafe_fixes=unsafe is True,
        min_confidence=str(confidence) if confidence in CONFIDENCE_RANK else base.min_confidence,
    )


def _codes(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(str(item).strip().upper() for item in items if str(item).strip())
