"""The names a file uses: every identifier outside its prose (a regular expression, for files
not parsed), or, in a parsed file, those used other than in the calls already counted. A
function whose name a file uses this way may be called from anywhere (handed on as a value,
spelt in a string, queued), so what its known callers hold says nothing of it."""

from __future__ import annotations

import ast
import re
from collections import Counter

# every identifier a file names (a call, `accept.delay(`, `callback=req.accept`, `return
# req.accept`, `getattr(req, "accept")`), but the one a `def` defines
_USED = re.compile(rb"[A-Za-z_]\w*")
# what names nothing: a docstring, a string of prose (`"You cannot confirm this change"`).
# Every string is matched from its opening quote, escapes and all, so the scan keeps in step
# with the code; only a triple-quoted string or a sentence (three words or more, no code's
# punctuation) is dropped. A string of names (`"reject save".split()`, `"app.tasks.reject"`), a
# template or f-string (`{`, `}`) and comments are kept: they may name a method
_STRING = re.compile(
    rb'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""'
    rb"|'''(?:[^'\\]|\\[\s\S]|'(?!''))*'''"
    rb'|"(?:[^"\\\n]|\\[\s\S])*"'
    rb"|'(?:[^'\\\n]|\\[\s\S])*'"
)
_SENTENCE = re.compile(rb"^[A-Za-z][^(){}\[\]=+*/%<>&|@#\\]*$")


_DEFINED = re.compile(rb"\bdef[ \t]+(\w+)")


def defined_names(source: bytes) -> tuple[str, ...]:
    """The names a file's `def`s define, repeats kept, read by a regular expression."""
    return tuple(name.decode() for name in _DEFINED.findall(source))


def names_used(source: bytes, defined: tuple[str, ...]) -> frozenset[str]:
    """Every identifier a file names outside its prose, but those its `def`s only define."""
    tokens = Counter(_USED.findall(_without_prose(source)))
    for name in defined:
        tokens[name.encode()] -= 1  # a `def` names what it defines, it does not use it
    return frozenset(n.decode() for n, count in tokens.items() if count > 0)


_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:[.:][A-Za-z_]\w*)*$")


def names_used_otherwise(tree: ast.Module, counted: set[int]) -> set[str]:
    """The names a parsed file uses but in the calls already `counted` (by the id of the node
    naming the function): module-level calls, every name used as a value, and strings
    (`getattr(r, "accept")`, `"app.tasks.accept"`)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in counted:
            found.add(node.attr)
        elif isinstance(node, ast.Name) and id(node) not in counted:
            found.add(node.id)
        elif isinstance(node, ast.alias) and node.asname and node.asname != node.name:
            found.add(node.name.rsplit(".", 1)[-1])  # `from app.tasks import reject as refuse`: used as another name
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.match(node.value):
            found.update(node.value.replace(":", ".").split("."))  # `"reject"`, `"app.tasks.reject"`
    return found


def _without_prose(source: bytes) -> bytes:
    def keep(match: re.Match[bytes]) -> bytes:
        text = match.group()
        if b"{" in text or b"}" in text:
            return text
        if text[:3] in (b'"""', b"'''"):
            return b" "
        body = text[1:-1]
        return b" " if len(body.split()) >= 3 and _SENTENCE.match(body) else text

    return _STRING.sub(keep, source)
