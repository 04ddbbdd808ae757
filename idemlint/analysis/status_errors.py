"""Where an HTTP status error (what `raise_for_status()` raises, for a 4xx as for a 5xx) is
raised, and whether it leaves the function it is raised in.

A retry setting that names the status error class (Celery's `autoretry_for=(HTTPError,)`)
retries a 4xx only if one can reach it. A helper that catches every request error and raises
its own (`except Exception as e: raise ImportFailure(...) from e`) ends the status error
there; a handler that re-raises it (`raise`, `raise e`) passes it on. The function summaries
carry the fact (`raises_status_error`) through calls, so a task is judged by what the
functions it calls let out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.calls import tail_name
from idemlint.analysis.model import local_callee
from idemlint.analysis.policy.common import caught_expression
from idemlint.analysis.summary_records import Chain, Step
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.http import HTTP_STATUS_ERROR_BASES, HTTP_STATUS_ERRORS, RAISES_STATUS_ERROR
from idemlint.knowledge.retries import CATCH_ALL

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.summaries import Callee
else:
    cst = LazyModule("libcst", globals(), "cst")

_CATCHES_A_STATUS_ERROR = frozenset(CATCH_ALL | HTTP_STATUS_ERRORS | HTTP_STATUS_ERROR_BASES)


@dataclass(frozen=True)
class ProjectRaisers:
    """What the project index knows of status errors: the names of its functions that may let
    one out (`raises_status_error`), and whether a call runs a project function it has no
    summary of (its module was not summarised), which may then raise one for all we know."""

    names: frozenset[str]
    unknown_project_call: Callable[[cst.Call], bool]


def status_error_raised(model: ModuleModel, function: cst.FunctionDef) -> cst.CSTNode | None:
    """The first place in the function's body that raises a status error which leaves it:
    `response.raise_for_status()`, the method handed on (`check = r.raise_for_status`, a
    response hook), `raise requests.HTTPError(...)`. Not `urlopen()`: its `urllib.error.HTTPError`
    is another class, ended by `except URLError:` or `except OSError:`, and the summaries do not
    tell the classes apart. A nested function or lambda that raises
    one counts: it runs as a part of the function (a callback, a hook)."""
    for node in model.iter_nodes(function.body, stop_at_functions=False):
        if isinstance(node, cst.Attribute):
            raises = node.attr.value == RAISES_STATUS_ERROR
        elif isinstance(node, cst.Raise) and isinstance(node.exc, cst.Call):
            raises = (model.qualname(node.exc.func) or "") in HTTP_STATUS_ERRORS
        else:
            continue
        if raises and status_error_leaves(model, node):
            return node
    return None


def status_error_chains(model: ModuleModel) -> dict[cst.FunctionDef, Chain]:
    """The functions of the module that raise a status error which leaves them
    (`raises_status_error`), each with the step that raises it."""
    found: dict[cst.FunctionDef, Chain] = {}
    for function in model.functions:
        raised = status_error_raised(model, function)
        if raised is not None:
            found[function] = (
                Step(f"{RAISES_STATUS_ERROR}()" if isinstance(raised, cst.Attribute) else "raise", raised),
            )
    return found


def status_error_leaves(model: ModuleModel, node: cst.CSTNode) -> bool:
    """Whether a status error raised at `node` leaves its function: no `try` around it has a
    handler that catches it (every exception, the class or one of its bases) and ends it
    there. The first handler that matches is the one that runs; one that re-raises what it
    caught, or retries with it (`raise self.retry(exc=exc)`), passes it on."""
    scope = model.scope_of(node)
    for ancestor in model.ancestors(node):
        if ancestor is scope:
            return True
        if not isinstance(ancestor, cst.Try) or not model.is_inside(node, ancestor.body):
            continue
        for handler in ancestor.handlers:
            if _catches_a_status_error(model, handler):
                if not _passes_on(model, handler):
                    return False
                break
    return True


def may_raise_status_error(
    model: ModuleModel,
    function: cst.FunctionDef,
    callee: Callable[[cst.Call], Callee | None],
    project: ProjectRaisers,
    seen: frozenset[cst.FunctionDef] = frozenset(),
) -> bool:
    """Whether a status error may leave `function`: raised in it, or by a function it calls or
    hands on (`map(get_json, urls)`) that may let one out, with no handler in between that ends
    it. A function of this module is followed; one of the project is known by its summary or,
    where the call cannot be resolved, by its name; one whose module has no summary may."""
    if status_error_raised(model, function) is not None:
        return True
    for node in model.iter_nodes(function.body, stop_at_functions=False):
        if isinstance(node, (cst.Name, cst.Attribute)) and not isinstance(model.parents.get(node), cst.Call):
            if tail_name(node).lower() in project.names:  # handed on as a value, run later
                return True
        if not isinstance(node, cst.Call) or not status_error_leaves(model, node):
            continue
        found = callee(node)
        if found is not None and found.summary.raises_status_error is not None:
            return True
        helper = local_callee(model, node)
        if helper is not None:
            if helper not in seen and may_raise_status_error(model, helper, callee, project, seen | {function}):
                return True
        elif found is None and (tail_name(node.func).lower() in project.names or project.unknown_project_call(node)):
            return True
    return False


def hooked_module(model: ModuleModel) -> bool:
    """`session.hooks["response"].append(lambda r, *a, **kw: r.raise_for_status())` at module
    level: every request through that session may raise a status error."""
    return any(
        isinstance(node, cst.Attribute)
        and node.attr.value == RAISES_STATUS_ERROR
        and model.enclosing_function(node) is None
        for node in model.iter_nodes(model.module, stop_at_functions=False)
    )


def _catches_a_status_error(model: ModuleModel, handler: cst.ExceptHandler) -> bool:
    caught = caught_expression(model, handler)
    if caught is None:
        return True  # a bare `except:`
    classes = caught_classes(caught)
    return any((model.qualname(c) or "") in _CATCHES_A_STATUS_ERROR for c in classes)


def _passes_on(model: ModuleModel, handler: cst.ExceptHandler) -> bool:
    """`raise`, `raise e` or `raise self.retry(exc=e)` in the handler: what it caught may go on
    (or is retried)."""
    bound = handler.name.name.value if handler.name is not None and isinstance(handler.name.name, cst.Name) else None
    for n in model.iter_nodes(handler.body):
        if not isinstance(n, cst.Raise):
            continue
        exc = n.exc
        if exc is None or bound is not None and isinstance(exc, cst.Name) and exc.value == bound:
            return True
        if isinstance(exc, cst.Call) and tail_name(exc.func) == "retry":
            return True
    return False
