"""Helpers a retry handler calls that may end the retry by raising: one handed the error to
judge (`def _on_error(exc, deadline): ... raise exc`), and one that raises once a count it is
handed says so (`def _check_attempts(attempt, limit): if attempt > limit: raise`, the bare
`raise` re-raising the error being handled). Raising from the handler leaves the loop, so the
handler goes round only while the helper lets it: handed the loop's count or a deadline, the
helper holds the loop's bound (IDM203); handed the error, it judges which errors are retried
(IDM201)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import positional_parameters
from idemlint.analysis.retry.exits import ends_by_raising

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")

# what a function handed an error to judge names it: `def _on_error(exc, ...)`
ERROR_PARAMETER = re.compile(r"^(e|ex|exc|err|error|exception|exc_info|failure)$")


def raises_on_the_error(model: ModuleModel, function: cst.FunctionDef) -> cst.Raise | None:
    """A function whose first parameter (after `self`) is named for an error, which raises it (or
    chains another from it, or re-raises it with a bare `raise` outside a handler of its own):
    handed what a retry handler caught, it decides whether the handler goes round."""
    first = positional_parameters(model, function)[:1]
    if not first or not ERROR_PARAMETER.match(first[0]):
        return None
    handlers = [n for n in model.iter_nodes(function.body) if isinstance(n, cst.ExceptHandler)]
    for n in model.iter_nodes(function.body):  # `raise exc`, `raise RetryError(...) from exc`, not `raise TypeError()`
        if not isinstance(n, cst.Raise):
            continue
        if any(isinstance(e, cst.Name) and e.value == first[0] for e in (n.exc, n.cause and n.cause.item)):
            return n
        if n.exc is None and not any(model.is_inside(n, h) for h in handlers):
            return n
    return None


def counts_to_a_raise(model: ModuleModel, function: cst.FunctionDef) -> tuple[tuple[str, ...], cst.CSTNode | None]:
    """The parameters whose test ends in a raise (the last statement of an `if` that reads them,
    outside any `try` of the function's own, which may swallow it, and not in a function it
    defines), and the first such `if`; nothing where there is none."""
    params = set(positional_parameters(model, function)) | {p.name.value for p in function.params.kwonly_params}
    tries = [n for n in model.iter_nodes(function.body) if isinstance(n, (cst.Try, cst.TryStar))]
    found: set[str] = set()
    first: cst.CSTNode | None = None
    for branch in model.iter_nodes(function.body):
        if not isinstance(branch, cst.If) or not ends_by_raising(branch.body.body):
            continue
        if any(model.is_inside(branch, t) for t in tries):
            continue
        tested = model.names_read(branch.test) & params
        if tested:
            found |= tested
            first = first or branch
    return tuple(sorted(found)), first
