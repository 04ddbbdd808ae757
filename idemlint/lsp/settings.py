"""The language server's settings: `initializationOptions` and `didChangeConfiguration`.

`select` and `ignore` (lists of codes or prefixes) replace the configured ones as
`--select`/`--ignore` do, `unsafeFixes` offers unsafe fixes too, and `minConfidence` and
`minStakes` hide less sure or lower-stakes findings as `--min-confidence` and `--min-stakes` do. Editors spell keys differently, so
camelCase, kebab-case and snake_case are all read; unknown keys are ignored.
"""

from __future__ import annotations

from dataclasses import dataclass

from idemlint.calibration import CONFIDENCE_RANK
from idemlint.stakes import STAKES_RANK

NAME = "idemlint"


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None  # None: as configured
    ignore: tuple[str, ...] | None = None
    unsafe_fixes: bool = False
    min_confidence: str | None = None  # hide findings less sure than this; None: as configured
    min_stakes: str | None = None  # hide findings with less at stake; None: as configured


def parse_settings(options: object, previous: Settings | None = None, problems: list[str] | None = None) -> Settings:
    """Settings from `initializationOptions` or a `didChangeConfiguration` payload, flat
    (`{"select": [...]}`) or under an `idemlint` key. Unknown keys are ignored (editors send
    their own); a value of the wrong kind keeps the previous one and is told in `problems`,
    so a typo is not silently the default."""
    problems = [] if problems is None else problems
    base = previous or Settings()
    if options is None:
        return base
    if not isinstance(options, dict):
        problems.append(f"settings must be an object, not {type(options).__name__}: ignored")
        return base
    nested = options.get(NAME)
    if isinstance(nested, dict):
        options = nested
    unsafe: object = base.unsafe_fixes
    for key in ("unsafeFixes", "unsafe-fixes", "unsafe_fixes"):
        if key in options:
            if isinstance(options[key], bool):
                unsafe = options[key]
            else:
                problems.append(f"{key} must be true or false, not {options[key]!r}: kept {base.unsafe_fixes}")
    confidence = _choice(options, "minConfidence", tuple(CONFIDENCE_RANK), base.min_confidence, problems)
    stakes = _choice(options, "minStakes", tuple(STAKES_RANK), base.min_stakes, problems)
    return Settings(
        select=_codes(options, "select", base.select, problems),
        ignore=_codes(options, "ignore", base.ignore, problems),
        unsafe_fixes=unsafe is True,
        min_confidence=confidence,
        min_stakes=stakes,
    )


def _choice(
    options: dict[str, object], camel: str, choices: tuple[str, ...], previous: str | None, problems: list[str]
) -> str | None:
    """One of `choices` under any spelling of the key (`minStakes`, `min-stakes`, `min_stakes`)."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    value = previous
    for key in (camel, snake.replace("_", "-"), snake):
        if key not in options:
            continue
        if options[key] is None or (isinstance(options[key], str) and options[key] in choices):
            value = options[key]  # type: ignore[assignment]
        else:
            problems.append(
                f"{key} must be one of {', '.join(choices)}, not {options[key]!r}: kept {previous or 'the configured value'}"
            )
    return value


def _codes(
    options: dict[str, object], key: str, previous: tuple[str, ...] | None, problems: list[str]
) -> tuple[str, ...] | None:
    if key not in options:
        return previous
    value = options[key]
    if value is None:
        return None
    if isinstance(value, str):
        items: list[object] = list(value.split(","))
    elif isinstance(value, list) and all(isinstance(item, str) for item in value):
        items = list(value)
    else:
        problems.append(f"{key} must be a list of codes, not {value!r}: kept the previous value")
        return previous
    return tuple(str(item).strip().upper() for item in items if str(item).strip())
