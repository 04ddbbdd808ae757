"""`# noqa` and `# noqa: IDM001,IDM002` comments, read and written the way flake8 maps them.

Only real comments count (Python's tokenize): `# noqa` in a string is SQL or a message, not an
instruction. A comment covers every line of its range, as in flake8: physical lines grouped up
to each NL or NEWLINE token, so a triple-quoted string or a backslash-continued statement is one
range and a comment after its last line covers its first. A file tokenize rejects is read line
by line, as before. A comment is written at the end of its range's last line, and only when the
edit keeps the program (`edit_keeps_program`): `--add-noqa` and the language server both call
`plan_noqa`, so they agree.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from idemlint.finding import Finding

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_NOQA_CODES = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
_IDEMLINT_IGNORE = re.compile(r"#\s*idemlint:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]+)\])?", re.IGNORECASE)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Tokens that are a string literal's text (f-strings are split into parts on 3.12+, t-strings on 3.14+).
_LITERAL_NAMES = ("STRING", "FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END", "TSTRING_START", "TSTRING_MIDDLE")
_LITERALS = frozenset(getattr(tokenize, name) for name in (*_LITERAL_NAMES, "TSTRING_END") if hasattr(tokenize, name))
_NOT_CODE = frozenset({tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT})


@dataclass(frozen=True)
class Comment:
    """One suppression comment: where it is written, and the lines it covers."""

    line: int
    start: int  # 1-based columns of the suppression's text in the comment
    end: int
    codes: frozenset[str] | None  # None: every code (a bare noqa)
    first: int  # the range of lines it covers
    last: int


class Suppressions(dict[int, "frozenset[str] | None"]):
    """line -> codes suppressed there (None: every code), for every line a comment covers;
    `comments` holds each comment once, for IDM800."""

    comments: tuple[Comment, ...] = ()


def split_lines(source: str) -> list[str]:
    """Lines as Python counts them: str.splitlines would also split on form feeds."""
    return _LINE_BREAK.split(source)


def _tokens(source: str) -> list[tokenize.TokenInfo] | str:
    """The tokens, or why tokenize rejects the text. Lines break as Python breaks them."""
    try:
        return list(tokenize.generate_tokens(io.StringIO(source, newline=None).readline))
    except (tokenize.TokenError, SyntaxError, ValueError, RecursionError) as error:
        message = error.args[0] if error.args else type(error).__name__
        return f"it cannot be tokenized ({message})"


def _ranges(tokens: list[tokenize.TokenInfo]) -> dict[int, tuple[int, int]]:
    """line -> (first, last) line of its range, as flake8's `_noqa_line_mapping` groups them."""
    ranges: dict[int, tuple[int, int]] = {}
    low, high = None, -1
    for token in tokens:
        if token.type in (tokenize.ENDMARKER, tokenize.DEDENT):
            continue
        low = token.start[0] if low is None else min(low, token.start[0])
        high = max(high, token.end[0])
        if token.type in (tokenize.NL, tokenize.NEWLINE):
            for line in range(low, high + 1):
                ranges[line] = (low, high)
            low, high = None, -1
    return ranges


def _read(text: str, line: int, column: int, ranges: Mapping[int, tuple[int, int]]) -> Comment | None:
    """The suppression in comment `text` (at 0-based `column` of `line`), if it is one."""
    codes: frozenset[str] | None = frozenset()
    span = None
    for pattern in (_NOQA, _IDEMLINT_IGNORE):
        match = pattern.search(text)
        if match is None:
            continue
        span = span or (column + match.start() + 1, column + match.end() + 1)
        named = match.group("codes")
        if named is None:
            codes = None
        elif codes is not None:
            codes |= frozenset(c.upper() for c in _NOQA_CODES.findall(named))
    if span is None:
        return None
    first, last = ranges.get(line, (line, line))
    return Comment(line, span[0], span[1], codes, first, last)


def find_suppressions(source: str) -> Suppressions:
    found = Suppressions()
    if "noqa" not in source.lower() and "idemlint:" not in source:
        return found
    lines = split_lines(source)
    if not any("#" in line and (_NOQA.search(line) or _IDEMLINT_IGNORE.search(line)) for line in lines):
        return found  # the words only, no comment shape: no need to tokenize
    tokens = _tokens(source)
    comments: list[Comment] = []
    if isinstance(tokens, str):  # cannot tell comments from strings: every line as it reads
        for number, physical in enumerate(lines, start=1):
            comment = _read(physical, number, 0, {}) if "#" in physical else None
            if comment is not None:
                comments.append(comment)
    else:
        ranges = _ranges(tokens)
        for token in tokens:
            if token.type == tokenize.COMMENT:
                comment = _read(token.string, token.start[0], token.start[1], ranges)
                if comment is not None:
                    comments.append(comment)
    for comment in comments:
        for line in range(comment.first, comment.last + 1):
            if line in found and found[line] is None:
                continue
            found[line] = None if comment.codes is None else (found.get(line) or frozenset()) | comment.codes
    found.comments = tuple(comments)
    return found


def is_suppressed(suppressions: Mapping[int, frozenset[str] | None], line: int, code: str) -> bool:
    if line not in suppressions:
        return False
    codes = suppressions[line]
    return codes is None or any(code.startswith(c) for c in codes)


# -- verifying an edit -----------------------------------------------------------------------------


def literals(source: str) -> list[str] | None:
    """The string-literal tokens in order (None when the text cannot be tokenized)."""
    tokens = _tokens(source)
    return None if isinstance(tokens, str) else [t.string for t in tokens if t.type in _LITERALS]


def _parse_error(source: str) -> str | None:
    """` (line N: why)` when the text does not parse; it is never compiled to code or run."""
    from idemlint.analysis.syntax import stdlib_tree

    try:
        stdlib_tree(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        where = f"line {error.lineno}: " if isinstance(error, SyntaxError) and error.lineno else ""
        return f" ({where}{error.msg if isinstance(error, SyntaxError) else type(error).__name__})"
    return None


def edit_keeps_program(before: str, after: str) -> str | None:
    """Why the edit from `before` to `after` may change the program, or None: `after` must parse
    (never executed) and hold the very same string literals, so no SQL or message changes."""
    problem = _parse_error(after)
    if problem is not None:
        return ("the file does not parse" if _parse_error(before) else "the edited file would not parse") + problem
    old, new = literals(before), literals(after)
    if old is None or new is None:
        return "the file cannot be tokenized"
    if old != new:
        return "the edit would change a string literal"
    return None


# -- writing suppressions ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NoqaEdit:
    """Replace text[start:end] (character offsets) with `replacement`, on 1-based `line`."""

    start: int
    end: int
    replacement: str
    line: int


class Added(NamedTuple):
    text: str
    changed: int  # lines changed
    refused: list[tuple[int, str]]  # (a finding's line, why no comment could suppress it)


@dataclass(frozen=True)
class _Lines:
    """Where each physical line starts and ends in the text, its comment and where its code ends."""

    starts: list[int]
    ends: list[int]
    comments: dict[int, tokenize.TokenInfo]
    code_ends: dict[int, int]  # 0-based column after the line's last code token


def _lines(text: str, tokens: list[tokenize.TokenInfo]) -> _Lines:
    breaks = list(_LINE_BREAK.finditer(text))
    comments: dict[int, tokenize.TokenInfo] = {}
    code_ends: dict[int, int] = {}
    for token in tokens:
        if token.type == tokenize.COMMENT:
            comments[token.start[0]] = token
        elif token.type not in _NOT_CODE and token.type != tokenize.ENDMARKER:
            code_ends[token.end[0]] = max(code_ends.get(token.end[0], 0), token.end[1])
    return _Lines([0, *(m.end() for m in breaks)], [*(m.start() for m in breaks), len(text)], comments, code_ends)


def _place(text: str, lines: _Lines, line: int, codes: set[str]) -> NoqaEdit | str | None:
    """The edit at the end of `line` (a range's last) that suppresses `codes`; why none is safe;
    or None when the comment there names them all already."""
    base = lines.starts[line - 1]
    content = text[base : lines.ends[line - 1]]
    comment = lines.comments.get(line)
    if comment is not None:
        match = _NOQA.search(comment.string)
        if match is not None and match.group("codes") is None:
            return None
        if match is not None:
            present = {c.upper() for c in _NOQA_CODES.findall(match.group("codes"))}
            missing = sorted(c for c in codes if not any(c.startswith(p) for p in present))
            if not missing:
                return None
            at = base + comment.start[1] + match.end("codes")
            return NoqaEdit(at, at, ", " + ", ".join(missing), line)
        after = comment.start[1] + len(comment.string.rstrip())
    elif line in lines.code_ends:
        after = lines.code_ends[line]
    else:
        return "the statement ends on a line with no code"
    if content[after:].strip():  # a backslash, or anything else after the statement
        return "the statement does not end at the end of its line"
    return NoqaEdit(base + after, base + len(content), "  # noqa: " + ", ".join(sorted(codes)), line)


def _apply(text: str, edits: Iterable[NoqaEdit]) -> str:
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text


def _check(text: str, edits: list[NoqaEdit], wanted: Mapping[int, set[str]]) -> str | None:
    """Why these edits must not be written: the program changes, or a code is still reported."""
    after = _apply(text, edits)
    reason = edit_keeps_program(text, after)
    if reason is not None:
        return reason
    suppressions = find_suppressions(after)
    if any(not is_suppressed(suppressions, line, code) for line, codes in wanted.items() for code in codes):
        return "the comment would not suppress the finding"
    return None


def plan_noqa(text: str, codes_by_line: Mapping[int, Iterable[str]]) -> tuple[list[NoqaEdit], dict[int, str]]:
    """The verified edits that suppress each line's codes (one per range, on its last line), and
    why, by finding line, the others cannot be written. Codes already suppressed need nothing."""
    present = find_suppressions(text)
    wanted = {line: {c for c in codes if not is_suppressed(present, line, c)} for line, codes in codes_by_line.items()}
    wanted = {line: codes for line, codes in wanted.items() if codes}
    if not wanted:
        return [], {}
    tokens = _tokens(text)
    if isinstance(tokens, str):
        return [], dict.fromkeys(wanted, tokens)
    lines = _lines(text, tokens)
    ranges = _ranges(tokens)
    refused: dict[int, str] = {}
    by_end: dict[int, dict[int, set[str]]] = {}  # a range's last line -> finding lines -> codes
    for line, codes in wanted.items():
        if not 1 <= line <= len(lines.starts):
            refused[line] = "the line is past the end of the file"
        else:
            by_end.setdefault(ranges.get(line, (line, line))[1], {})[line] = codes
    edits: dict[int, NoqaEdit] = {}
    for end, findings in by_end.items():
        placed = _place(text, lines, end, set().union(*findings.values()))
        if isinstance(placed, str):
            refused.update(dict.fromkeys(findings, placed))
        elif placed is not None:
            edits[end] = placed
    if edits and _check(text, list(edits.values()), {k: v for k, v in wanted.items() if k not in refused}):
        for end, edit in list(edits.items()):  # find the ones to refuse, each judged alone
            reason = _check(text, [edit], by_end[end])
            if reason is not None:
                refused.update(dict.fromkeys(by_end[end], reason))
                del edits[end]
        if edits and _check(text, list(edits.values()), {k: v for k, v in wanted.items() if k not in refused}):
            refused.update(dict.fromkeys((line for end in edits for line in by_end[end]), "the edits conflict"))
            edits.clear()
    return sorted(edits.values(), key=lambda e: e.start), refused


def add_noqa(text: str, codes_by_line: Mapping[int, Iterable[str]]) -> Added:
    """`text` with `# noqa: CODE` added (or extended) where it suppresses each line's codes, how
    many lines changed, and the lines refused with why. Line endings are kept."""
    edits, refused = plan_noqa(text, codes_by_line)
    return Added(_apply(text, edits), len(edits), sorted(refused.items()))


def noqa_edit(text: str, line: int, code: str) -> NoqaEdit | str | None:
    """The language server's "suppress" edit for `code` on `line`: the same placement as
    `--add-noqa`; a reason when none is safe; None when the code is suppressed already."""
    edits, refused = plan_noqa(text, {line: {code}})
    if line in refused:
        return refused[line]
    return edits[0] if edits else None


def add_noqa_to_files(
    files: Sequence[tuple[Path, str]], findings: Iterable[Finding], root: Path
) -> tuple[int, list[str]]:
    """`--add-noqa`: each finding's file rewritten in place with a `# noqa: CODE` for it (see
    `api.add_noqa`); (the lines changed, one line per file or finding line that could not be)."""
    from idemlint.parsing import decode
    from idemlint.reading import encode_like, read_source, write_problem

    real = dict((shown, path) for path, shown in files)
    by_file: dict[str, dict[int, set[str]]] = {}
    for f in findings:
        if f.code not in ("IDM800", "IDM900"):
            by_file.setdefault(f.path, {}).setdefault(f.line, set()).add(f.code)
    total, errors = 0, []
    for shown, lines in sorted(by_file.items()):
        path = real[shown]
        refused = write_problem(path, root)
        if refused is not None:
            errors.append(f"{shown}: cannot add noqa comments: {refused}")
            continue
        try:
            raw = read_source(path)
            added = add_noqa(decode(raw), lines)
            if added.changed:
                path.write_bytes(encode_like(raw, added.text))
        except OSError as error:
            errors.append(f"{shown}: cannot rewrite: {(error.strerror or str(error)).lower()}")
            continue
        total += added.changed
        errors.extend(f"{shown}:{line}: cannot add a noqa comment: {why}" for line, why in added.refused)
    return total, errors
