"""A rule's node-placed fix (`FixPlan`) to character offsets in the file's text (`Fix`).

Findings cross process boundaries and sit in the cache, so their fixes cannot hold CST
nodes; they are resolved here, once, while the parse is at hand. The text an edit brings in
follows the file's line endings (a CRLF file stays CRLF), and deleting one item of a
comma-separated list takes exactly one comma with it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint.finding import Edit, Fix

if TYPE_CHECKING:
    from collections.abc import Mapping

    import libcst as cst

    from idemlint.rule import FixPlan

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_ITEM_OWNS_LINE_AFTER = re.compile(r"[ \t]*,?[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n)")
_COMMA_AFTER = re.compile(r"[ \t]*,[ \t]*")


def line_starts(text: str) -> list[int]:
    """The offset where each line starts, line breaks as Python counts them."""
    starts = [0]
    for match in _LINE_BREAK.finditer(text):
        starts.append(match.end())
    return starts


def resolve_fix(
    plan: FixPlan,
    positions: Mapping[cst.CSTNode, tuple[int, int, int, int]],
    text: str,
    lines: list[str],
    starts: list[int],
) -> Fix | None:
    """Node-placed edits to character offsets in the source; None if a node has no position.

    Text that an edit brings in ends its lines like the line it goes to (a CRLF file stays
    CRLF), and text inserted after a last line that has no line break starts with one."""
    edits = []
    for edit in plan.edits:
        span = positions.get(edit.node)
        if span is None:
            return None
        line, col, end_line, end_col = span
        start = starts[line - 1] + col - 1
        end = starts[end_line - 1] + end_col - 1
        indent = re.match(r"[ \t]*", lines[line - 1]).group()  # type: ignore[union-attr]
        if edit.kind == "replace":
            if edit.until is not None:
                until = positions.get(edit.until)
                if until is None:
                    return None
                end = starts[until[0] - 1] + until[1] - 1
            edits.append(Edit(start, end, _with_line_ending(edit.text, _line_ending(text, starts, line))))
        elif edit.kind == "delete_line":
            edits.append(Edit(starts[line - 1], starts[end_line] if end_line < len(starts) else len(text), ""))
        elif edit.kind == "delete_item":
            edits.append(delete_item(text, start, end))
        elif edit.kind == "insert_before":
            code = _with_line_ending(_indent(edit.text, indent), _line_ending(text, starts, line))
            edits.append(Edit(starts[line - 1], starts[line - 1], code))
        elif edit.kind == "insert_after":
            newline = _line_ending(text, starts, end_line)
            code = _with_line_ending(_indent(edit.text, indent), newline)
            if end_line < len(starts):
                at = starts[end_line]
            else:  # the node is on the last line, which has no line break of its own
                at, code = len(text), newline + code
            edits.append(Edit(at, at, code))
    return Fix(tuple(edits), plan.safe, plan.description)


def _indent(code: str, indent: str) -> str:
    return "".join(indent + line if line.strip() else line for line in code.splitlines(keepends=True))


def _line_ending(text: str, starts: list[int], line: int) -> str:
    """The line break that ends `line` (1-based); for a last line without one, the file's
    first line break; "\\n" in a file of one line."""
    if line < len(starts):
        at = starts[line]
        return "\r\n" if text[at - 2 : at] == "\r\n" else text[at - 1]
    found = _LINE_BREAK.search(text)
    return found.group() if found else "\n"


def _with_line_ending(code: str, newline: str) -> str:
    return code if newline == "\n" and "\r" not in code else _LINE_BREAK.sub(newline, code)


def delete_item(text: str, start: int, end: int) -> Edit:
    """Remove one item of a comma-separated list (an argument, an imported name) with one
    comma next to it, so that neither `f(a, )` nor `f(, b)` is left: the item's whole
    lines when it has them to itself, else the comma after it when another item follows
    on the same line, else the comma before it, else the comma after it."""
    line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
    own_line = _ITEM_OWNS_LINE_AFTER.match(text, end)
    if own_line is not None and not text[line_start:start].strip(" \t\f"):
        return Edit(line_start, own_line.end(), "")
    after = _COMMA_AFTER.match(text, end)
    if after is not None and after.end() < len(text) and text[after.end()] not in ")]}#\r\n":
        return Edit(start, after.end(), "")
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    if before > 0 and text[before - 1] == ",":
        return Edit(before - 1, end, "")
    return Edit(start, after.end() if after is not None else end, "")
