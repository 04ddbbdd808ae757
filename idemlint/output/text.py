from __future__ import annotations

from collections.abc import Sequence

from idemlint.calibration import CONFIDENCE_RANK
from idemlint.finding import Finding
from idemlint.output import PLAIN, ReportContext
from idemlint.printable import printable


def headline(f: Finding, color: bool) -> str:
    """`path:line:col: CODE [*] message`: location in bold, code in red (errors) or yellow
    (warnings); `[*]` marks a finding that `--fix` repairs, as ruff marks it."""
    location = f"{f.path}:{f.line}:{f.col}:"
    code = f.code
    if color:
        location = f"\x1b[1m{location}\x1b[0m"
        code = f"\x1b[1;{31 if f.severity == 'error' else 33}m{code}\x1b[0m"  # warnings in yellow
    marker = " [*]" if f.fix is not None and f.fix.safe else ""
    return f"{location} {code}{marker} {f.message}"


def source_excerpt(f: Finding, lines: Sequence[str], color: bool) -> list[str]:
    """The finding's first line with a caret under its span, as ruff and flake8 show it."""
    if not 1 <= f.line <= len(lines):
        return []
    text = lines[f.line - 1].rstrip("\r\n").expandtabs(1)
    end = f.end_col if f.end_line == f.line and f.end_col > f.col else len(text) + 1
    before, spanned = printable(text[: f.col - 1]), printable(text[f.col - 1 : max(end, f.col) - 1])
    carets = "^" * max(1, display_width(spanned))
    if color:
        carets = f"\x1b[1;{31 if f.severity == 'error' else 33}m{carets}\x1b[0m"
    number = str(f.line)
    return [f"  {number} | {printable(text)}", f"  {' ' * len(number)} | {' ' * display_width(before)}{carets}"]


def display_width(text: str) -> int:
    """Terminal columns `text` takes: two for wide East Asian characters and emoji, none for
    combining marks, one for the rest."""
    import unicodedata

    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def format_text(findings: Sequence[Finding], color: bool, context: ReportContext = PLAIN) -> str:
    """`path:line:col: CODE message`, the source line with a caret (when `context.sources` holds the
    file's lines), then the suggestion, severity, confidence and stakes below it. The most at
    stake first, then the surest, then by place (the findings come sorted by place)."""
    from idemlint.registry import RESERVED_CODES
    from idemlint.stakes import DESCRIBED, STAKES_RANK

    ranked = sorted(findings, key=lambda f: (-STAKES_RANK.get(f.stakes, 3), -CONFIDENCE_RANK.get(f.confidence, 3)))
    sources = context.sources
    lines = []
    for f in ranked:
        lines.append(headline(f, color))
        if sources is not None and f.path in sources:
            lines.extend(source_excerpt(f, sources[f.path], color))
        lines.extend(f"    via: {r.path}:{r.line}: {r.message}" for r in f.related)
        if sources is not None and f.evidence:  # with the source: how it was reached, and where
            lines.append(f"    evidence: {f.evidence}" + (f"; file: {f.role}" if f.role not in ("", "source") else ""))
        lines.append(f"    help: {f.suggestion}")
        if f.code in RESERVED_CODES:  # reported by idemlint itself: no confidence to state
            lines.append(f"    ({f.severity}; `idemlint explain {f.code}`)")
        else:
            at_stake = f", at stake: {DESCRIBED[f.stakes]}" if f.stakes in DESCRIBED else ""
            lines.append(f"    ({f.severity}, {f.confidence} confidence{at_stake}; `idemlint explain {f.code}`)")
    return "\n".join(lines) + ("\n" if lines else "")
