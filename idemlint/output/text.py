from __future__ import annotations

from collections.abc import Sequence

from idemlint.finding import Finding


def headline(f: Finding, color: bool) -> str:
    """`path:line:col: CODE message`: location in bold, code in red (errors) or yellow (warnings)."""
    location = f"{f.path}:{f.line}:{f.col}:"
    code = f.code
    if color:
        location = f"\x1b[1m{location}\x1b[0m"
        code = f"\x1b[1;{31 if f.severity == 'error' else 33}m{code}\x1b[0m"  # warnings in yellow
    return f"{location} {code} {f.message}"


def format_text(findings: Sequence[Finding], color: bool) -> str:
    """`path:line:col: CODE message`, then the suggestion, severity and confidence below it."""
    from idemlint.registry import RESERVED_CODES

    lines = []
    for f in findings:
        lines.append(headline(f, color))
        lines.append(f"    help: {f.suggestion}")
        if f.code in RESERVED_CODES:  # reported by idemlint itself: no confidence to state
            lines.append(f"    ({f.severity}; `idemlint explain {f.code}`)")
        else:
            lines.append(f"    ({f.severity}, {f.confidence} confidence; `idemlint explain {f.code}`)")
    return "\n".join(lines) + ("\n" if lines else "")
