"""Code nothing in the project names: a function, a plain class or a method of one whose name
appears nowhere else in the project's Python text (strings, docstrings and trailing comments
included, comment lines not).

Nothing in the program can run such code (a backup copy of a module, a service class the views
stopped using, a helper left behind), so what a rule finds there is a bug that cannot happen
today. It is still reported, at the confidence its kind has: code just written is not called
yet, and the editor and the pre-commit hook must speak of it (lowering it would hide it from
their default view until something calls it, and a pre-commit run on the calling file would
never show it). Its message says so, for the reader to weigh.

Only what the project alone could call counts: a decorator other than a plain one may register
the function (`@app.route`, `@shared_task`: a beat schedule kept in a database may name it),
and so may one spread over lines; a class with a base that is not plain or defined in the same
module (a base of the same name elsewhere may be a library's: Celery's `Task`), a decorator or a
metaclass may be found by a framework (a Django `Command`, a model); a method of such a class
may be a hook the framework calls by its name (`perform_create`, `clean_email`). A public
method of a class the project names may be a hook too (a mixin's `perform_create`, a
middleware's `process_exception`, `getattr(self, "on_" + kind)`), or a library's API, so it
counts only where its class is never named itself, or the method is private. Definitions are
read by a line scan (no parse): a top-level `def` or `class`, and the `def`s directly in such a
class's body. A module the program looks names up in may have any of its functions or classes
called: `getattr(actions, request.POST["action"])`, the name not a string in the source and
`actions` a module the file imports (`from shop.views import actions`, also as an alias or
relative). Entry points named only outside Python (a `lambda_handler` in a serverless template, a console script in `pyproject.toml`) are not seen: the note says "in this project"
of its Python.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from idemlint.analysis.calls import absolute
from idemlint.analysis.names_used import IDENTIFIER

# (dotted name, short name, the class it is defined in ("" at the top level), and for a class
# the base names it is spelled with, None where its bases or decorators may let a framework
# find it; () for a function)
Definition = tuple[str, str, str, "tuple[str, ...] | None", bool]
# per file: its candidate definitions (production code only) and the names it uses
UnreachedFacts = tuple[tuple[Definition, ...], frozenset[str]]
NO_UNREACHED: UnreachedFacts = ((), frozenset())

_COMMENT_LINE = re.compile(rb"^[ \t]*#[^\n]*", re.M)
# the start of every `def` or `class` line, whatever follows
_DEF = re.compile(rb"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.M)
# a one-line class statement's bases: `class Name(A, b.B):`, `class Name:`
_CLASS_LINE = re.compile(rb"[ \t]*(?:\(([^()\n]*)\))?[ \t]*:")
_DECORATOR = re.compile(rb"^[ \t]*@[ \t]*([\w.]+)(.*)$")
# decorators that leave a function where it is: no registry keeps it
_PLAIN_DECORATORS = frozenset(
    {
        "staticmethod",
        "classmethod",
        "property",
        "cached_property",
        "abstractmethod",
        "atomic",
        "lru_cache",
        "cache",
        "override",
        "retry",
        "on_exception",
        "on_predicate",
    }
)
# `getattr(actions, request.POST["action"])`: the first argument, where the second is no literal
_LOOKUP = re.compile(rb"(?<![\w.])getattr\(\s*(\w+)\s*,(?!\s*(['\"])[\w.]*\2\s*[,)])")
# `from shop.views import actions`, `from . import actions as a`: (package, the names imported)
_FROM_IMPORT = re.compile(rb"^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(?:\(([^)]*)\)|([\w \t,]+))", re.M)
_LOOKED_UP = "getattr:"
# bases that let no framework find a class
_PLAIN_BASES = frozenset({"object", "ABC", "abc.ABC", "Generic", "typing.Generic"})


def unreached_facts(source: bytes, module: str, production: bool, is_package: bool = False) -> UnreachedFacts:
    """A file's candidate definitions (only for production code: a test is never reached
    from the program) and every identifier it spells but in its own `def` and `class` lines
    and its comment lines. A docstring, a string or a comment after code that names a function
    counts as a use: it costs a finding's note, never a finding, and reading prose apart is
    the cost of the whole scan (it runs on every file)."""
    code = _COMMENT_LINE.sub(b"", source)
    tokens = Counter(IDENTIFIER.findall(code))
    for match in _DEF.finditer(source):
        tokens[match.group(3)] -= 1  # a `def` names what it defines, it does not use it
    used = frozenset(name.decode() for name, count in tokens.items() if count > 0)
    looked_up = {name.decode() for name, _quote in _LOOKUP.findall(code)}
    if looked_up:
        used |= frozenset(_LOOKED_UP + full for full in _modules_imported(code, module, is_package, looked_up))
    return (tuple(_definitions(source, module)) if production and module else ()), used


def _modules_imported(code: bytes, module: str, is_package: bool, names: set[str]) -> Iterable[str]:
    """The dotted names of the modules a file imports under `names` with `from ... import`
    (a relative package read from the file's own module name)."""
    for match in _FROM_IMPORT.finditer(code):
        package = absolute(match.group(1).decode(), module, is_package)
        listed = (match.group(2) or match.group(3)).decode()
        for part in re.sub(r"#[^\n]*", "", listed).split(","):
            words = part.split()
            if words and words[-1] in names and (len(words) == 1 or words[1:2] == ["as"]):
                yield f"{package}.{words[0]}" if package else words[0]


def _definitions(source: bytes, module: str) -> Iterable[Definition]:
    """The candidates: top-level functions and classes, plainly decorated, and the methods
    (private ones, or any of a class that may go unnamed) directly in such a class's body."""
    lines = source.split(b"\n")
    local_classes = {m.group(3) for m in _DEF.finditer(source) if not m.group(1) and m.group(2) == b"class"}
    owner, owner_plain, body_indent = "", False, b""
    row, counted_to = 0, 0
    for match in _DEF.finditer(source):
        indent, kind, name = match.group(1), match.group(2), match.group(3).decode()
        row += source.count(b"\n", counted_to, match.start())
        counted_to = match.start()
        plain = _plainly_decorated(lines, row, len(indent))
        if not indent:
            owner, body_indent = "", b""
            if kind == b"def":
                if plain:
                    yield f"{module}.{name}", name, "", (), False
                continue
            bases = _bases(source, match.end(), local_classes)
            owner, owner_plain = name, plain and bases is not None
            yield f"{module}.{name}", name, "", bases if owner_plain else None, True
        elif owner and kind == b"def" and owner_plain and plain and not name.startswith("__"):
            body_indent = body_indent or indent
            if indent == body_indent:
                yield f"{module}.{owner}.{name}", name, owner, (), False


def _plainly_decorated(lines: list[bytes], row: int, indent: int) -> bool:
    """Whether every decorator above the `def` or `class` on `row` is a plain wrapper (called
    with nothing that registers it): a line above that is no decorator and may still be one
    (the end of a decorator spread over lines, `)`) counts as a registering one."""
    row -= 1
    while row >= 0:
        line = lines[row]
        found = _DECORATOR.match(line)
        if found is None:
            text = line.strip()
            return (
                not text
                or text.startswith(b"#")
                or not (line[:1] in b" \t)]}" or text.endswith((b",", b"(", b"\\", b")")))
            )
        if (
            len(line) - len(line.lstrip()) != indent
            or found.group(1).decode().rsplit(".", 1)[-1] not in _PLAIN_DECORATORS
        ):
            return False
        row -= 1
    return True


def _bases(source: bytes, at: int, local_classes: set[bytes]) -> tuple[str, ...] | None:
    """The bases of a one-line class statement where each is plain or a class this module
    defines (a base of the same name elsewhere may be a library's: Celery's `Task`); None for
    a keyword (`metaclass=`), any other base, or a statement continued on the next line."""
    found = _CLASS_LINE.match(source, at)
    if found is None:
        return None
    text = (found.group(1) or b"").decode()
    if "=" in text or "(" in text:
        return None
    bases = tuple(part.strip().split("[", 1)[0] for part in text.split(",") if part.strip())
    if any(b not in _PLAIN_BASES and b.encode() not in local_classes for b in bases):
        return None
    return bases


def join_unreached(files: Iterable[UnreachedFacts]) -> tuple[frozenset[str], frozenset[str]]:
    """The dotted names of the definitions nothing in the project names, and the short names of
    every definition judged so (the cache keys what a file holds by them)."""
    files = list(files)
    used: set[str] = set()
    definitions: list[Definition] = []
    for defined, names in files:
        used |= names
        definitions.extend(defined)
    classes = {short: bases for _, short, owner, bases, is_class in definitions if is_class and bases is not None}
    plain: dict[str, bool] = {}

    def is_plain(name: str, seen: frozenset[str] = frozenset()) -> bool:
        if name not in plain:
            bases = classes.get(name)
            plain[name] = (
                bases is not None
                and name not in seen
                and all(base in _PLAIN_BASES or is_plain(base, seen | {name}) for base in bases)
            )
        return plain[name]

    unreached_classes = {short for short in classes if short not in used and is_plain(short)}
    found: set[str] = set()
    for dotted, short, owner, _, is_class in definitions:
        if _LOOKED_UP + dotted.rsplit(".", 2 if owner else 1)[0] in used:
            continue  # a function, class or method of a module the program looks names up in
        if is_class:
            if short in unreached_classes:
                found.add(dotted)
        elif not owner:
            if short not in used:
                found.add(dotted)
        elif owner in unreached_classes or short not in used and short.startswith("_") and is_plain(owner):
            found.add(dotted)  # a public method of a named class may be a hook a framework or a caller runs
    return frozenset(found), frozenset(short for _, short, _, _, _ in definitions)
