"""Positions and edits between idemlint's findings and the Language Server Protocol.

idemlint counts lines and columns from 1 and columns and fix offsets in characters (code
points). The protocol counts lines and columns from 0 and columns in the code units of the
encoding the client and server agreed on: UTF-16 unless the client offers another, so a
character outside the Basic Multilingual Plane (an emoji) is two columns wide there. Line
breaks are `\\r\\n`, `\\r` and `\\n` for both, as for Python itself.
"""

from __future__ import annotations

import bisect
import re

from idemlint.suppression import noqa_edit

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

Point = tuple[int, int]  # 0-based line, column in the negotiated code units


def units(text: str, encoding: str = UTF16) -> int:
    """The length of `text` in code units of `encoding`."""
    if encoding == UTF32 or text.isascii():
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


class LineIndex:
    """Line starts of one text, to convert offsets and positions both ways."""

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.text = text
        self.encoding = encoding
        breaks = list(_LINE_BREAK.finditer(text))
        self.starts = [0, *(m.end() for m in breaks)]
        self.ends = [*(m.start() for m in breaks), len(text)]  # where each line's content ends

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line(self, line: int) -> str:
        """The text of 0-based `line` without its line break ("" past the end)."""
        if not 0 <= line < len(self.starts):
            return ""
        return self.text[self.starts[line] : self.ends[line]]

    def from_offset(self, offset: int) -> Point:
        """The position of a character offset (clamped to the text; never inside a `\\r\\n`)."""
        offset = min(max(offset, 0), len(self.text))
        line = bisect.bisect_right(self.starts, offset) - 1
        start = self.starts[line]
        return line, units(self.text[start : min(offset, self.ends[line])], self.encoding)

    def from_line_col(self, line: int, col: int) -> Point:
        """The position of idemlint's 1-based (line, column in characters)."""
        if line < 1:
            return 0, 0
        if line > len(self.starts):
            return self.end()
        zero = line - 1
        return self.from_offset(min(self.starts[zero] + max(col - 1, 0), self.ends[zero]))

    def offset_of(self, line: int, col: int) -> int:
        """The character offset of idemlint's 1-based (line, column in characters), clamped
        to the text and to the line's content."""
        if line < 1:
            return 0
        if line > len(self.starts):
            return len(self.text)
        return min(self.starts[line - 1] + max(col - 1, 0), self.ends[line - 1])

    def to_offset(self, line: int, character: int) -> int:
        """The character offset of a protocol position (clamped to its line)."""
        if line < 0:
            return 0
        if line >= len(self.starts):
            return len(self.text)
        text = self.line(line)
        if self.encoding == UTF32 or text.isascii():
            return self.starts[line] + min(max(character, 0), len(text))
        count = taken = 0
        for char in text:
            if count >= character:
                break
            count += units(char, self.encoding)
            taken += 1
        return self.starts[line] + taken

    def end(self) -> Point:
        return self.from_offset(len(self.text))


def suppress_edit(text: str, line: int, code: str) -> tuple[int, int, str] | str | None:
    """The edit (start offset, end offset, replacement) that suppresses `code` reported on
    1-based `line`, placed and verified as `--add-noqa` places it (idemlint.suppression); why
    no comment can be written safely; or None when the code is suppressed already."""
    edit = noqa_edit(text, line, code)
    if edit is None or isinstance(edit, str):
        return edit
    return edit.start, edit.end, edit.replacement


def code_at(line_text: str, column: int) -> str | None:
    """The idemlint code (`IDM001`) under a character column (0-based) of a line's
    suppression comment, for hover on `# noqa: IDM001`."""
    hash_at = line_text.find("#")
    if hash_at < 0 or column < hash_at:
        return None
    for match in re.finditer(r"IDM[0-9]+", line_text[hash_at:], re.IGNORECASE):
        if match.start() <= column - hash_at <= match.end():
            return match.group().upper()
    return None
