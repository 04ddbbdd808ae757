"""Functions that let no exception out, as stdlib `ast` reads them, found per file and joined
over the project by dotted name.

A function whose body ends every failure never fails for its caller: each statement cannot
fail (a constant, a name, a test of names) or is a `try` one of whose handlers catches every
exception and whose handlers only log and end (`except Exception: log.exception(...);
return`). A retry around a call to one can never run (a Celery task's `except Exception: raise
self.retry()` around `DeployService().execute(id)`, `autoretry_for=(Exception,)` on a task
whose own body ends every failure), and what it would repeat is never repeated. A name counts
only where every definition of it in the project agrees (a module that defines a function
twice); a function with no such `try` (a stub an override replaces) never counts.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from idemlint.analysis.machines import decorator_name, dotted_name
from idemlint.analysis.syntax import own_nodes, parameter_names, stdlib_tree
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.retries import CATCH_ALL

# per definition: (its dotted name, `module.Class.name` for a method, and whether it lets nothing out)
QuietFacts = tuple[tuple[str, bool], ...]
# the key of whether a function's own body lets nothing out, whatever decorates it
BODY = "body:"
# the key of whether making an instance of a class runs nothing that may fail (no `__init__` or
# `__new__` of its own and no bases, or a quiet one): `Runner().run()` fails only where `run` may
MADE = "()"

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# a handler that may catch every exception: a file with none has no function that ends every failure
_CATCH_ALL_HANDLER = re.compile(rb"\bexcept\s*:|\bexcept\b[^:\n]*\b(?:Base)?Exception\b")
# decorators that leave the function as written (any other may wrap it in code that fails)
_PLAIN_DECORATORS = frozenset({"staticmethod", "classmethod"})
# what a log line may show of a failure without failing itself: `str(exc)`, `repr(exc)`
_SAFE_TEXT = frozenset({"str", "repr", "type"})


def quiet_facts(source: bytes | str, module: str, tree: ast.Module | None = None) -> QuietFacts:
    """Each function of the module (at its top level, or a method of a class there), by its
    dotted name, with whether it lets nothing out; under `BODY` + its name, whether its own
    body does, whatever wraps it (a task's decorator); under its class's name + `MADE`, whether
    making an instance may fail. A name bound again in the same scope (`notify = wrap(notify)`,
    a `def` under an `if`, an import) is never quiet. A file with no handler that catches
    every exception has no such function: it gives none (a name no file gives is never quiet)."""
    if isinstance(source, str):
        source = source.encode()
    if _CATCH_ALL_HANDLER.search(source) is None:
        return ()
    try:
        if tree is None:
            tree = stdlib_tree(source)
        return tuple(_scope_facts(module, tree.body, _bound_from_afar(tree)))
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return ()


def _scope_facts(owner: str, body: list[ast.stmt], afar: set[str], within: str = "") -> list[tuple[str, bool]]:
    """The verdicts of a module's or a class's own `def`s (and, for a module, of its classes).
    `afar`: the names the module binds elsewhere (`global`, `del`, `Runner.run = ...`); `within`:
    the class whose body this is (none for the module's)."""
    found: list[tuple[str, bool]] = []
    rebound = _bound_otherwise(body) | {n.rpartition(".")[2] for n in afar if n.rpartition(".")[0] == within}
    for statement in body:
        if isinstance(statement, _DEFS):
            verdicts = _verdicts(f"{owner}.{statement.name}", statement)
            found.extend((key, quiet and statement.name not in rebound) for key, quiet in verdicts)
        elif isinstance(statement, ast.ClassDef) and not within:
            inner = _scope_facts(f"{owner}.{statement.name}", statement.body, afar, statement.name)
            # a decorated class (or one bound again) may have its methods replaced, and gain a constructor
            plain = not statement.decorator_list and statement.name not in rebound
            found.extend((key, quiet and plain) for key, quiet in inner)
            bare = not statement.bases and not statement.keywords
            own = [quiet for key, quiet in inner if key.rsplit(".", 1)[-1] in ("__init__", "__new__")]
            found.append((f"{owner}.{statement.name}{MADE}", plain and bare and all(own)))
    return found


def _bound_from_afar(tree: ast.Module) -> set[str]:
    """Names bound outside their own scope's statements, as `module`-relative dotted names:
    `global notify` in a function (then `notify = ...`), `del notify`, `Runner.run = loud`."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            found.update(node.names)
        elif isinstance(node, ast.Delete):
            found.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found.update(
                f"{t.value.id}.{t.attr}"
                for t in targets
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
            )
    return found


def _bound_otherwise(body: list[ast.stmt]) -> set[str]:
    """Names a scope binds other than by one plain `def` or `class` of its own: by an
    assignment, an import, a second definition, or a definition under `if`/`try`/`with`."""
    seen: set[str] = set()
    bound: set[str] = set()
    for statement in body:
        if isinstance(statement, (*_DEFS, ast.ClassDef)):
            (bound if statement.name in seen else seen).add(statement.name)
            continue
        for node in ast.walk(statement):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
            elif isinstance(node, (*_DEFS, ast.ClassDef)):
                bound.add(node.name)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
    return bound


def _verdicts(name: str, function: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[tuple[str, bool], ...]:
    try:
        body = body_ends_every_failure(function)
        plain = all(decorator_name(d) in _PLAIN_DECORATORS for d in function.decorator_list)
    except RecursionError:  # a chain of `elif`s (or of attributes) too long to follow: say nothing of it
        body = plain = False
    return ((name, body and plain), (BODY + name, body))


def join_quiet(files: Iterable[QuietFacts]) -> frozenset[str]:
    """The names every definition of which in the project lets nothing out."""
    verdicts: dict[str, bool] = {}
    for facts in files:
        for name, quiet in facts:
            verdicts[name] = verdicts.get(name, True) and quiet
    return frozenset(name for name, quiet in verdicts.items() if quiet)


def body_ends_every_failure(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether no exception leaves the function's own body. Not a generator's (it runs later,
    as it is read), nor a stub's (`pass`, a docstring: an override does the work). A caller
    counts on it only where no decorator wraps the function (`@transaction.atomic` commits
    after the body, and the commit may fail)."""
    if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in own_nodes(function)):
        return False
    params = set(parameter_names(function))
    if not any(_swallows(s, set(params)) for s in function.body):
        return False
    return _ends_every_failure(function.body, params)


def _ends_every_failure(statements: list[ast.stmt], bound: set[str]) -> bool:
    """Each statement cannot fail or ends every failure; `bound`: the names surely bound so far
    (a name bound only in a `try` may be unbound after it: reading it raises)."""
    for statement in statements:
        if not (_cannot_fail(statement, bound) or _swallows(statement, bound)):
            return False
        for done in [statement, *(statement.finalbody if isinstance(statement, ast.Try) else ())]:
            if isinstance(done, ast.Assign):  # a `finally:` runs on every way out of its `try`
                bound |= {t.id for t in done.targets if isinstance(t, ast.Name)}
            elif isinstance(done, (ast.Import, ast.ImportFrom)):
                bound |= {(a.asname or a.name).split(".")[0] for a in done.names}
    return True


def _cannot_fail(statement: ast.stmt, bound: set[str]) -> bool:
    """`pass`, a docstring, an import (`from .storage import upload`, at the top of a task's
    body), `return done`, `done = True`, `if launch is None: return None`: no
    call, no subscript, no arithmetic, no truth test (`if rows:` may run a query), no read of a
    name that may be unbound."""
    if isinstance(statement, (ast.Pass, ast.Global, ast.Nonlocal)):
        return True
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        # a module the program has: a missing one fails at deploy, not per call (not `*`: it binds unknown names)
        return all(a.name != "*" for a in statement.names)
    if isinstance(statement, ast.Expr):
        return isinstance(statement.value, ast.Constant)
    if isinstance(statement, ast.Return):
        return statement.value is None or _plain(statement.value, bound)
    if isinstance(statement, ast.Assign):
        return all(isinstance(t, ast.Name) for t in statement.targets) and _plain(statement.value, bound)
    if isinstance(statement, ast.If):
        return (
            isinstance(statement.test, ast.Compare)
            and _plain(statement.test, bound)
            and _ends_every_failure(statement.body, set(bound))
            and _ends_every_failure(statement.orelse, set(bound))
        )
    return False


def _plain(expr: ast.expr, bound: set[str]) -> bool:
    """A value read without running anything: a constant, a bound name, `x is None`."""
    if isinstance(expr, ast.Constant):
        return True
    if isinstance(expr, ast.Name):
        return expr.id in bound
    if isinstance(expr, ast.Compare):
        identity = all(isinstance(op, (ast.Is, ast.IsNot)) for op in expr.ops)
        return identity and _plain(expr.left, bound) and all(_plain(c, bound) for c in expr.comparators)
    return False


def _swallows(statement: ast.stmt, bound: set[str]) -> bool:
    """A `try` one of whose handlers catches every exception (bare, `Exception`,
    `BaseException`, in a tuple too), whose handlers only log and end, and whose `else:` and
    `finally:` end every failure themselves."""
    if not isinstance(statement, ast.Try) or not any(_catches_all(h.type) for h in statement.handlers):
        return False
    return all(_only_logs(h, bound) for h in statement.handlers) and (
        _ends_every_failure(statement.orelse, set(bound)) and _ends_every_failure(statement.finalbody, set(bound))
    )


def _only_logs(handler: ast.ExceptHandler, bound: set[str]) -> bool:
    """A handler that records the failure and ends: log calls of what cannot fail to show
    (`log.exception("failed %s", job_id)`, `str(exc)`), and statements that cannot fail. One
    that writes, sends or raises may fail in turn, and so may a log of `exc.response.status`."""
    known = bound | ({handler.name} if handler.name else set())
    return all(
        _cannot_fail(s, known)
        or isinstance(s, ast.Expr)
        and isinstance(s.value, ast.Call)
        and LOGGING_CALL.match(dotted_name(s.value.func) or "") is not None
        and dotted_name(s.value.func) != "warnings.warn"  # an error under `-W error`
        and all(_shown_safely(a, known) for a in (*s.value.args, *(k.value for k in s.value.keywords)))
        for s in handler.body
    )


def _shown_safely(expr: ast.expr, bound: set[str]) -> bool:
    """A log argument that cannot fail: a constant, a bound name, an f-string of those,
    `str(exc)`, a dict of those (`extra={"error": str(exc)}`)."""
    if _plain(expr, bound):
        return True
    if isinstance(expr, ast.JoinedStr):
        return all(
            _shown_safely(v.value if isinstance(v, ast.FormattedValue) else v, bound) and not _formatted_by(v)
            for v in expr.values
        )
    if isinstance(expr, ast.Call):
        return dotted_name(expr.func) in _SAFE_TEXT and len(expr.args) == 1 and _plain(expr.args[0], bound)
    if isinstance(expr, ast.Dict):
        return all(k is not None and _shown_safely(k, bound) for k in expr.keys) and all(
            _shown_safely(v, bound) for v in expr.values
        )
    return False


def _formatted_by(value: ast.expr) -> bool:
    return isinstance(value, ast.FormattedValue) and value.format_spec is not None


def _catches_all(caught: ast.expr | None) -> bool:
    if caught is None:
        return True
    if isinstance(caught, ast.Tuple):
        return any(_catches_all(e) for e in caught.elts)
    return dotted_name(caught) in CATCH_ALL
