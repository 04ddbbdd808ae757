"""Code nothing in the project names: a function, a plain class or a method of one whose name
appears nowhere else in the project's Python text (strings of names included, prose and
comments not: `analysis/names_used.py`).

Nothing in the program can run such code (a backup copy of a module, a service class the views
stopped using, a helper left behind), so what a rule finds there is a bug that cannot happen
today. It is still reported, at the confidence its kind has: code just written is not called
yet, and the editor and the pre-commit hook must speak of it (lowering it would hide it from
their default view until something calls it, and a pre-commit run on the calling file would
never show it). Its message says so, for the reader to weigh.

Only what the project alone could call counts: a decorator other than a plain one may register
the function (`@app.route`, `@receiver`), but a task queue's (`@shared_task`, `@app.task`,
dramatiq's `@actor`) runs it only when something enqueues it by name; a class with a base from outside the
project, a decorator or a metaclass may be found by a framework (a Django `Command`, a model);
a method of such a class may be a hook the framework calls by its name (`perform_create`,
`clean_email`). A public method of a class the project names may be called by the library's
users, so it counts only where its class is never named itself, or the method is private.
Definitions are read by a line scan (no parse): a top-level `def` or `class`, and the `def`s
directly in such a class's body.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from idemlint.analysis.names_used import any_use, names_used

# (dotted name, short name, the class it is defined in ("" at the top level), and for a class
# the base names it is spelled with, None where its bases or decorators may let a framework
# find it; () for a function)
Definition = tuple[str, str, str, "tuple[str, ...] | None", bool]
# per file: its candidate definitions (production code only) and the names it uses
UnreachedFacts = tuple[tuple[Definition, ...], frozenset[str]]
NO_UNREACHED: UnreachedFacts = ((), frozenset())

_DEF = re.compile(rb"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)[ \t]*(\([^)\n]*\)|\(|)[ \t]*(?:->[^\n]*)?:", re.M)
_DECORATOR = re.compile(rb"^[ \t]*@[ \t]*([\w.]+)")
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
# decorators that register a task a worker runs only when something enqueues it by name (a call
# `.delay()`, a beat schedule's string): registered, yet reached only through such a name
_QUEUED_BY_NAME = frozenset({"task", "shared_task", "actor"})
# bases that let no framework find a class
_PLAIN_BASES = frozenset({"", "object", "ABC", "abc.ABC", "Generic", "typing.Generic"})


def unreached_facts(source: bytes, module: str, production: bool) -> UnreachedFacts:
    """A file's candidate definitions (only for production code: a test is never reached
    from the program) and every name it uses but in its own `def` and `class` lines."""
    defined = tuple(m.group(3).decode() for m in _DEF.finditer(source))
    used = frozenset(any_use(names_used(source, defined)))
    return (tuple(_definitions(source, module)) if production and module else ()), used


def _definitions(source: bytes, module: str) -> Iterable[Definition]:
    lines = source.split(b"\n")
    owner, owner_plain, body_indent = "", False, None
    for match in _DEF.finditer(source):
        indent, kind, name = match.group(1), match.group(2), match.group(3).decode()
        row = source.count(b"\n", 0, match.start())
        plain = _plainly_decorated(lines, row, len(indent))
        if not indent:
            owner, body_indent = "", None
            if kind == b"def":
                if plain:
                    yield f"{module}.{name}", name, "", (), False
                continue
            bases = _bases(match.group(4))
            owner, owner_plain = name, plain and bases is not None
            yield f"{module}.{name}", name, "", bases if owner_plain else None, True
        elif owner and kind == b"def" and owner_plain and plain and not name.startswith("__"):
            body_indent = body_indent or indent
            if indent == body_indent:
                yield f"{module}.{owner}.{name}", name, owner, (), False


def _plainly_decorated(lines: list[bytes], row: int, indent: int) -> bool:
    """Whether every decorator above the `def` or `class` on `row` is a plain wrapper."""
    row -= 1
    while row >= 0:
        line = lines[row]
        found = _DECORATOR.match(line)
        if found is None:
            return not line.strip().startswith(b"@") and not line.rstrip().endswith((b",", b"(", b"\\"))
        if len(line) - len(line.lstrip()) != indent:
            return False
        if found.group(1).decode().rsplit(".", 1)[-1] not in _PLAIN_DECORATORS | _QUEUED_BY_NAME:
            return False
        row -= 1
    return True


def _bases(spelled: bytes) -> tuple[str, ...] | None:
    """The base names of a one-line class statement; None for a keyword (`metaclass=`) or a
    statement continued on the next line."""
    if spelled == b"(":
        return None
    text = spelled.decode().strip("()")
    if "=" in text or "(" in text:
        return None
    return tuple(part.strip().split("[", 1)[0] for part in text.split(",") if part.strip())


def join_unreached(files: Iterable[UnreachedFacts]) -> frozenset[str]:
    """The dotted names of the definitions nothing in the project names."""
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
            bases = classes.get(name.rsplit(".", 1)[-1])
            plain[name] = (
                bases is not None
                and name not in seen
                and all(base in _PLAIN_BASES or is_plain(base, seen | {name}) for base in bases)
            )
        return plain[name]

    unreached_classes = {short for short in classes if short not in used and is_plain(short)}
    found: set[str] = set()
    for dotted, short, owner, _, is_class in definitions:
        if is_class:
            if short in unreached_classes:
                found.add(dotted)
        elif not owner:
            if short not in used:
                found.add(dotted)
        elif owner in unreached_classes or short not in used and is_plain(owner):
            found.add(dotted)
    return frozenset(found)
