"""What functions elsewhere in the project do: an index built before files are checked.

A file alone cannot see into the methods it calls: `job.set_status("failed")` is an
unconditional transition if `Job.set_status` just assigns and saves, and a guarded one if
it first returns when the job is complete. The runner maps every Python file of the project
root to plain facts with the standard library's `ast` (about ten times cheaper than libcst,
and only files that define such methods are parsed), reduces them to one `ProjectIndex`,
and each file is then checked against it. The index is plain, picklable data: it crosses
to worker processes and its digest is part of every cache key, so a change to a helper
re-checks its callers.

Calls are matched by method name only where every definition in the project agrees: a
name defined guarded in one class and unguarded in another stays unknown.
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# `set_status`, `change_status`, `update_subscription_status`, `mark_state`...
SETTER = re.compile(r"^(set|change|update|mark)_(\w+_)?(status|state|stage|phase)$")
_CANDIDATE = re.compile(rb"def\s+(set|change|update|mark)_\w*(status|state|stage|phase)\s*\(")


@dataclass(frozen=True)
class ProjectIndex:
    # state setters whose every definition in the project checks the instance's current
    # state before writing (`if self.complete: return`, `if new not in self.allowed(): raise`)
    guarded_setters: frozenset[str] = frozenset()
    # state setters defined in the project that write without such a check
    unguarded_setters: frozenset[str] = frozenset()

    @property
    def digest(self) -> str:
        text = repr((sorted(self.guarded_setters), sorted(self.unguarded_setters)))
        return hashlib.sha256(text.encode()).hexdigest()[:16]


EMPTY = ProjectIndex()


def setter_facts(source: bytes | str) -> dict[str, bool]:
    """{setter method name: guarded?} for the state setters a module defines."""
    raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    if not _CANDIDATE.search(raw):
        return {}
    try:
        tree = ast.parse(raw)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    facts: dict[str, bool] = {}
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for method in cls.body:
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and SETTER.match(method.name):
                if _extends_base(method):
                    continue  # `super().set_status(status)` first: as guarded as the base it extends
                guarded = _checks_own_state_first(method)
                facts[method.name] = facts.get(method.name, guarded) and guarded
    return facts


def _checks_own_state_first(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An `if` on `self.<something>` that returns or raises, before the method writes."""
    for statement in method.body:
        if isinstance(statement, ast.If) and _reads_self(statement.test) and _leaves(statement.body):
            return True
        if _writes_self(statement):
            return False
    return False


def _extends_base(method: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """The method's first statement calls the same method of its base class."""
    first = method.body[1] if len(method.body) > 1 and _is_docstring(method.body[0]) else method.body[0]
    call = first.value if isinstance(first, ast.Expr) else None
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == method.name
        and isinstance(call.func.value, ast.Call)
        and isinstance(call.func.value.func, ast.Name)
        and call.func.value.func.id == "super"
    )


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _reads_self(test: ast.expr) -> bool:
    return any(
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
        for node in ast.walk(test)
    )


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise))


def _writes_self(statement: ast.stmt) -> bool:
    for node in ast.walk(statement):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(
                isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self" for t in targets
            ):
                return True
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "self"
            and node.func.attr.startswith("save")
        ):
            return True
    return False


def build_index(files: Iterable[Path]) -> ProjectIndex:
    """Map every file to its facts, reduce to one index. Unreadable files are skipped
    (the check itself reports them)."""
    guarded: dict[str, bool] = {}
    for path in files:
        try:
            source = path.read_bytes()
        except OSError:
            continue
        for name, is_guarded in setter_facts(source).items():
            guarded[name] = guarded.get(name, is_guarded) and is_guarded
    return ProjectIndex(
        frozenset(n for n, g in guarded.items() if g), frozenset(n for n, g in guarded.items() if not g)
    )
