"""Retries no failure reaches: a handler of what its `try` cannot raise (a timeout around
`raise_for_status()` alone), a handler whose `try` runs only calls to functions that let no
exception out (`analysis/quiet_functions.py`: `except Exception: log(...); return` around
everything they do), and a task whose own body ends every failure. Celery's `raise
self.retry()` there, or its `autoretry_for`, never runs: nothing is retried, so there is no
retry policy to judge and no side effect repeated.

A call is matched by the dotted name `call_target` gives it (an imported function, a method
of an instance made for the call, `Runner().run()`, of a class with no constructor that may
fail, or of an import or a module-level instance), never by its bare name: `run()` imported
from `subprocess` is not the project's `Runner.run`. A method called on `self` or on a
parameter may be a subclass's: it may fail.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.calls import call_target
from idemlint.analysis.quiet_functions import BODY, MADE
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.http import RAISES_STATUS_ERROR, TRANSPORT_ERRORS

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


@dataclass(frozen=True)
class QuietNames:
    """The project's functions that let no exception out (`ProjectIndex.quiet_functions`), and
    how this module's calls name them: `call_target`'s dotted name, through the packages that
    re-export it (`defined_as`)."""

    names: frozenset[str]
    module: str
    defined_as: Callable[[str], str]

    def runs_quietly(self, model: ModuleModel, call: cst.Call) -> bool:
        """The call runs one of them, with nothing else that may fail: its arguments are names
        and constants, and an instance made for it (`Runner().run()`) is made quietly. Not a
        method called on `self` or `cls`, which a subclass may override."""
        func = call.func
        if (
            isinstance(func, cst.Attribute)
            and isinstance(func.value, cst.Name)
            and not _known_receiver(model, func.value)
        ):
            return False  # `self.run()`, `runner.run()` of a parameter: a subclass's may run
        target = call_target(model, call, self.module)
        if target is None or self.defined_as(target) not in self.names:
            return False
        if not all(_plain(a.value) for a in call.args):
            return False
        receiver = func.value if isinstance(func, cst.Attribute) else None
        if isinstance(receiver, cst.Call):
            return not receiver.args and self.defined_as(target.rsplit(".", 1)[0]) + MADE in self.names
        return True

    def body_ends_every_failure(self, model: ModuleModel, function: cst.FunctionDef) -> bool:
        """The function's own body lets no exception out (an `autoretry_for` on it never fires),
        and nothing but the task's decorator wraps it (`@transaction.atomic` under it commits
        after the body, and the commit may fail). Only a module's function, or a method of a
        class there, is known by its name."""
        owner = model.enclosing_class(function)
        top = model.module.body
        if (
            len(function.decorators) != 1
            or owner is not None
            and (owner not in top or model.parents.get(function) is not owner.body)
        ):
            return False
        if owner is None and function not in top:
            return False
        name = f"{owner.name.value}.{function.name.value}" if owner is not None else function.name.value
        return f"{BODY}{self.module}.{name}" in self.names


def dead_handlers(model: ModuleModel, function: cst.FunctionDef, quiet: QuietNames | None) -> frozenset[cst.CSTNode]:
    """The handlers in the function that no exception reaches: their `try`'s body calls one or
    more functions that let nothing out, and does nothing else that may fail."""
    if quiet is None or not quiet.names:
        return frozenset()
    return frozenset(
        handler
        for node in model.iter_nodes(function.body)
        if isinstance(node, cst.Try) and _runs_only_quiet_calls(model, node.body, quiet)
        for handler in node.handlers
    )


def catches_what_its_try_cannot_raise(model: ModuleModel, handler: cst.CSTNode) -> bool:
    """A handler of transport errors only (`except requests.Timeout:`, `ConnectionError`) whose
    `try` does nothing but `response.raise_for_status()`, which raises a status error and
    never times out (no read of the body, which may: a streamed one). The handler never runs,
    and a loop it would send round again re-sends nothing."""
    attempt = model.parents.get(handler)
    if not isinstance(handler, cst.ExceptHandler) or not isinstance(attempt, cst.Try):
        return False
    names = [(model.dotted(c) or "").rsplit(".", 1)[-1] for c in caught_classes(handler.type)]
    if not names or not all(TRANSPORT_ERRORS.match(name) for name in names):
        return False
    checks = 0
    for statement in attempt.body.body if isinstance(attempt.body, cst.IndentedBlock) else ():
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else (None,):
            if isinstance(small, (cst.Break, cst.Continue, cst.Pass)):
                continue
            if not (isinstance(small, cst.Expr) and _checks_the_status(small.value)):
                return False
            checks += 1
    return checks > 0


def _checks_the_status(value: cst.BaseExpression) -> bool:
    return (
        isinstance(value, cst.Call)
        and not value.args
        and isinstance(value.func, cst.Attribute)
        and isinstance(value.func.value, cst.Name)
        and value.func.attr.value == RAISES_STATUS_ERROR
    )


def in_unreachable_handler(model: ModuleModel, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """Inside the loop, in a handler of what its `try` cannot raise."""
    return any(catches_what_its_try_cannot_raise(model, a) for a in model.ancestors(node, until=loop))


def in_dead_handler(model: ModuleModel, node: cst.CSTNode, dead: frozenset[cst.CSTNode]) -> bool:
    return bool(dead) and any(a in dead for a in model.ancestors(node))


def _runs_only_quiet_calls(model: ModuleModel, block: cst.BaseSuite, quiet: QuietNames) -> bool:
    if not isinstance(block, cst.IndentedBlock):
        return False
    calls = 0
    for statement in block.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Pass):
                continue
            if isinstance(small, cst.Assign) and not all(isinstance(t.target, cst.Name) for t in small.targets):
                return False
            if not isinstance(small, (cst.Expr, cst.Assign, cst.Return)):
                return False
            found = _quiet_calls(model, small.value, quiet)
            if found is None:
                return False
            calls += found
    return calls > 0  # nothing called: a read there (a lazy relation, a property) may fail


def _quiet_calls(model: ModuleModel, value: cst.BaseExpression | None, quiet: QuietNames) -> int | None:
    """How many quiet calls `value` makes: `None`, a name, a constant, `a and b` of those, or
    the result of a quiet call (awaited too); None where it may fail."""
    if value is None or _plain(value):
        return 0
    if isinstance(value, cst.Await) and isinstance(value.expression, cst.Call):
        value = value.expression
    if isinstance(value, cst.BooleanOperation):
        left, right = _quiet_calls(model, value.left, quiet), _quiet_calls(model, value.right, quiet)
        return None if left is None or right is None else left + right
    if isinstance(value, cst.Call) and quiet.runs_quietly(model, value):
        return 1
    return None


def _known_receiver(model: ModuleModel, receiver: cst.Name) -> bool:
    """A name imported (a module, a class, an instance made there) and bound in no function
    around the call. A parameter (`runner: Runner` may be given a subclass), `self`, or an
    instance this module makes (which any function may rebind) says nothing for sure."""
    name = receiver.value
    if name not in model.imports:
        return False
    return not any(
        model.bindings_of(a, name) for a in model.ancestors(receiver) if isinstance(a, (cst.FunctionDef, cst.Lambda))
    )


def _plain(value: cst.BaseExpression) -> bool:
    """Read without running anything a failure can come from: names and constants."""
    return isinstance(value, (cst.Name, cst.SimpleString, cst.Integer, cst.Float))
