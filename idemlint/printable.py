"""Text from the linted code or a file name, made safe to print on one line.

A hostile repository chooses its SQL identifiers, string literals and file names. Printed
raw, a newline there starts a new output line (`::add-mask::` or a forged annotation in
GitHub Actions, a fake finding in a log) and an escape sequence drives the terminal. So
every finding and every error line is made printable once, where it is made: C0 and C1
control characters except tab, line and paragraph separators, bidirectional overrides and
lone surrogates (which no output encoding can write) are shown as `\\xNN` or `\\uNNNN`.
"""

from __future__ import annotations

import re

_UNPRINTABLE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """`text` with every character that could end a line, move the cursor or fail to encode
    escaped; anything else, tabs and non-ASCII letters included, unchanged."""
    return _UNPRINTABLE.sub(_escaped, text) if _UNPRINTABLE.search(text) else text
