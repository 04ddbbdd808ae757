"""`# noqa` and `# noqa: IDM001,IDM002` comments, read the way flake8 reads them."""

from __future__ import annotations

import re

_NOQA = re.compile(r"#\s*noqa(?::[\s]?(?P<codes>[A-Z]+[0-9]+(?:[,\s]+[A-Z]+[0-9]+)*))?", re.IGNORECASE)
_NOQA_CODES = re.compile(r"[A-Z]+[0-9]+", re.IGNORECASE)
_IDEMLINT_IGNORE = re.compile(r"#\s*idemlint:\s*ignore(?:\[(?P<codes>[A-Z0-9,\s]+)\])?", re.IGNORECASE)

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

# line -> codes suppressed there; None means every code (a bare `# noqa`).
Suppressions = dict[int, "frozenset[str] | None"]


def split_lines(source: str) -> list[str]:
    """Lines as Python counts them: str.splitlines would also split on form feeds."""
    return _LINE_BREAK.split(source)


def find_suppressions(source: str) -> Suppressions:
    found: Suppressions = {}
    if "noqa" not in source.lower() and "idemlint:" not in source:
        return found
    for number, line in enumerate(split_lines(source), start=1):
        if "#" not in line:
            continue
        for pattern in (_NOQA, _IDEMLINT_IGNORE):
            match = pattern.search(line)
            if match is None:
                continue
            codes = match.group("codes")
            if codes is None:
                found[number] = None
            elif found.get(number, frozenset()) is not None:
                previous = found.get(number) or frozenset()
                found[number] = previous | frozenset(c.upper() for c in _NOQA_CODES.findall(codes))
    return found


def real_comment_lines(source: str, lines: set[int]) -> set[int]:
    """Of `lines`, those where the suppression is a real comment, not text inside a string
    (a docstring that shows `# noqa: IDM001` suppresses like flake8 but is never "unused")."""
    import io
    import tokenize

    found: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.COMMENT and token.start[0] in lines:
                if _NOQA.search(token.string) or _IDEMLINT_IGNORE.search(token.string):
                    found.add(token.start[0])
    except (tokenize.TokenError, SyntaxError, ValueError):
        return set(lines)  # cannot tell: keep them all
    return found


def comment_span(line: str) -> tuple[int, int]:
    """1-based start and end columns of the suppression comment on a line ((1, 1) if none)."""
    for pattern in (_NOQA, _IDEMLINT_IGNORE):
        match = pattern.search(line)
        if match is not None:
            return match.start() + 1, match.end() + 1
    return 1, 1


def is_suppressed(suppressions: Suppressions, line: int, code: str) -> bool:
    if line not in suppressions:
        return False
    codes = suppressions[line]
    return codes is None or any(code.startswith(c) for c in codes)


def add_noqa(text: str, codes_by_line: dict[int, set[str]]) -> tuple[str, int]:
    """`text` with `# noqa: CODE` added (or extended) on each given line, and how many lines
    changed. Line endings are kept; a line inside a multi-line string cannot be reached by a
    comment, so the caller only passes the lines findings are reported on."""
    parts = re.split(f"({_LINE_BREAK.pattern})", text)  # lines as Python counts them, with their endings
    lines = [parts[i] + (parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)]
    changed = 0
    for number, codes in sorted(codes_by_line.items()):
        if not 1 <= number <= len(lines):
            continue
        line = lines[number - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        match = _NOQA.search(body)
        if match is not None and match.group("codes") is None:
            continue  # a bare `# noqa` suppresses everything already
        if match is not None:
            present = {c.upper() for c in _NOQA_CODES.findall(match.group("codes"))}
            wanted = sorted(present | codes)
            if set(wanted) == present:
                continue
            body = body[: match.start()] + "# noqa: " + ", ".join(wanted) + body[match.end() :]
        else:
            body = body + "  # noqa: " + ", ".join(sorted(codes))
        lines[number - 1] = body + ending
        changed += 1
    return "".join(lines), changed
