"""Look rules up by code or name and resolve --select/--ignore."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idemlint.finding import Finding
from idemlint.rule_table import RULE_TABLE, RuleRow

if TYPE_CHECKING:
    from idemlint.rule import Rule

# The rule classes (idemlint.rules) are imported only where a rule's class is needed: codes,
# names and selection come from idemlint.rule_table, so a warm run never imports them.

# Findings the engine itself reports; they have no rule class. Their documentation lives
# here, once: `idemlint rules`, `idemlint explain`, docs/rules.md, SARIF and the text report
# all read it.
PARSE_ERROR = "IDM900"
UNUSED_SUPPRESSION = "IDM800"


@dataclass(frozen=True)
class ReservedCode:
    """The documentation of a code the engine reports itself, in a rule's sections."""

    code: str
    name: str
    summary: str  # one line for `idemlint rules` and the rules table
    severity: str  # what its findings carry (Finding's default): the text colour, the SARIF level
    what_it_does: str
    why: str
    # Further sections, (heading, body), after "Why is this bad?".
    sections: tuple[tuple[str, str], ...]
    fix_hint: str
    fix_safety: str = "No automatic fix."


RESERVED_CODES: dict[str, ReservedCode] = {
    code.code: code
    for code in (
        ReservedCode(
            code=UNUSED_SUPPRESSION,
            name="unused-suppression",
            summary="A `# noqa: IDM...` comment suppresses nothing on the lines it covers (CLI only).",
            severity="error",
            what_it_does=(
                "Flags a `# noqa: IDM001` (or `# idemlint: ignore[IDM001]`) comment that names the code "
                "of a rule enabled for the file when that rule reports nothing on the comment's line. "
                "The finding is on that line and names the unused codes."
            ),
            why=(
                "A suppression outlives the code it excused: once the finding is fixed or moves to "
                "another line, the comment stays and silently hides the next real finding there."
            ),
            sections=(
                (
                    "When it is reported",
                    "- Only for full codes of rules enabled for the file: a bare `# noqa`, a prefix "
                    "(`# noqa: IDM0`), codes of other tools (`# noqa: E501`) and codes of rules that are "
                    "not selected, or are skipped for the file (tests, migrations, `per-file-ignores`), "
                    "are never reported.\n"
                    "- IDM800 is selected and ignored like a rule: `--ignore IDM800` or "
                    '`ignore = ["IDM800"]` turns it off, and a `--select` that does not name it hides it.\n'
                    "- IDM800 itself cannot be suppressed with `# noqa`: remove the stale code instead.\n"
                    "- It is a CLI-only check: under flake8, flake8 owns `# noqa` and selection, so the "
                    "flake8 plugin never reports IDM800.",
                ),
            ),
            fix_hint="Remove the code from the noqa comment (or the comment).",
        ),
        ReservedCode(
            code=PARSE_ERROR,
            name="parse-error",
            summary="The file could not be read, parsed or analysed, so nothing in it was checked.",
            severity="error",
            what_it_does=(
                "Reports a file idemlint could not check, at the position of the problem when there "
                "is one (a syntax error's line and column), else on line 1: bytes that do not decode "
                "in the file's encoding, a NUL byte, a syntax error, a file over one of the limits "
                "below, or a worker process that died while analysing it. The message says which."
            ),
            why=(
                "A file that could not be checked must never look clean: without IDM900 a syntax "
                "error or an oversized file would pass the run with no finding at all."
            ),
            sections=(
                (
                    "Limits",
                    "libcst's parser is quadratic on some shapes, so a file is reported instead of "
                    "analysed when it is:\n\n"
                    "- over 8 MB;\n"
                    "- nested more than 100 brackets deep;\n"
                    "- holding an expression with more than 1,000 operators;\n"
                    "- still being analysed after 60 s (the per-file time budget, on platforms with "
                    "`SIGALRM`; not on Windows).",
                ),
                (
                    "Files that are not parsed",
                    "A file that contains none of the trigger words the enabled rules need (`uuid`, "
                    "`retry`, `update`...) is not parsed at all, so a syntax error there is not "
                    "reported: leave that to your compiler or other linters. (The command line still "
                    "parses such a file when it has a `# noqa` comment, to look for IDM800.)",
                ),
                (
                    "Turning it off",
                    'IDM900 is on unless `--ignore IDM900` or `ignore = ["IDM900"]` names it (or a '
                    "prefix of it: `IDM9`, `IDM`); `--select` never hides it, so `--select IDM001` still "
                    "reports a file that could not be checked. On the command line a `# noqa` comment "
                    "cannot suppress it (the file's comments are never matched to findings); under "
                    "flake8, flake8's own selection and `# noqa` apply to it as to any code.",
                ),
            ),
            fix_hint=(
                "Fix the file so Python can parse it; idemlint checked nothing else in it. A file over "
                "a limit is usually generated: exclude it (`extend-exclude`), or split it."
            ),
        ),
    )
}
# (name, summary) by code: what the engine needs to build these findings.
RESERVED = {code: (doc.name, doc.summary) for code, doc in RESERVED_CODES.items()}


def all_codes() -> list[str]:
    return sorted([rule.code for rule in RULE_TABLE] + list(RESERVED))


def rule_by_code_or_name(key: str) -> type[Rule] | ReservedCode | None:
    """A rule, or the documentation of a code the engine reports itself (IDM800, IDM900)."""
    from idemlint.rules import ALL_RULES

    key = key.strip()
    for rule in ALL_RULES:
        if rule.code == key.upper() or rule.name == key.lower():
            return rule
    for doc in RESERVED_CODES.values():
        if doc.code == key.upper() or doc.name == key.lower():
            return doc
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
    from idemlint.rules import ALL_RULES

    select, ignore = tuple(select), tuple(ignore)
    return [rule for rule in ALL_RULES if is_enabled(rule.code, select, ignore)]


def enabled_rows(select: Iterable[str], ignore: Iterable[str]) -> list[RuleRow]:
    """What `enabled_rules` selects, as rows of the static table: no rule module imported."""
    select, ignore = tuple(select), tuple(ignore)
    return [row for row in RULE_TABLE if is_enabled(row.code, select, ignore)]


def reserved_finding(code: str, path: str, line: int, col: int, end_col: int, message: str, help: str) -> Finding:
    """A finding of idemlint itself (IDM800, IDM900): its name from the reserved table."""
    name, _summary = RESERVED[code]
    return Finding(
        path=path,
        line=line,
        col=col,
        code=code,
        end_line=line,
        end_col=end_col,
        name=name,
        message=message,
        suggestion=help,
    )
