"""Definitions that never run: a function defined again, later in the same block, under the
same name (`def get_json(): ...` twice in a module, the first one copied and left behind).
Calls by that name reach the later one, so what the earlier body does is not what the
program does, and findings in it are dropped. Not where the earlier one is registered or read
before it is replaced: a decorator that is not a known wrapper (`@receiver(...)`, `@app.route`,
`@task`, `@property`) may have kept it, and the later `def` may read it as it runs (a
decorator, a parameter's default)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.knowledge.retries import PLAIN_WRAPPERS

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def shadowed_definitions(model: ModuleModel) -> frozenset[cst.FunctionDef]:
    """The module's functions and methods replaced, unread, by a later `def` of the same name."""
    found: frozenset[cst.FunctionDef] | None = model.memo.get("shadowed_definitions")
    if found is None:
        found = frozenset(d for block in _blocks(model.module) for d in _replaced(model, block))
        model.memo["shadowed_definitions"] = found
    return found


def _blocks(node: cst.CSTNode) -> Iterator[Sequence[cst.CSTNode]]:
    """The statement lists of the module, its classes and its functions."""
    body = getattr(node, "body", None)
    statements = body.body if isinstance(body, cst.IndentedBlock) else body if isinstance(node, cst.Module) else None
    if isinstance(statements, (list, tuple)):
        yield statements
        for statement in statements:
            if isinstance(statement, (cst.ClassDef, cst.FunctionDef)):
                yield from _blocks(statement)


def _replaced(model: ModuleModel, statements: Sequence[cst.CSTNode]) -> Iterator[cst.FunctionDef]:
    names = [s.name.value for s in statements if isinstance(s, cst.FunctionDef)]
    twice = {name for name in names if names.count(name) > 1} if len(set(names)) < len(names) else set()
    for index, statement in enumerate(statements):
        if not isinstance(statement, cst.FunctionDef) or statement.name.value not in twice:
            continue  # only a name defined again in the block can be replaced: no scan for the rest
        if not all(_wraps(model, d) for d in statement.decorators):
            continue
        name = statement.name.value
        for later in statements[index + 1 :]:
            if isinstance(later, cst.FunctionDef) and later.name.value == name:
                if name not in _read_when_defined(model, later):
                    yield statement
                break
            if name in model.names_read(later):
                break  # read (or handed somewhere) before it is replaced


def _wraps(model: ModuleModel, decorator: cst.Decorator) -> bool:
    expression = decorator.decorator
    called = expression.func if isinstance(expression, cst.Call) else expression
    return (model.qualname(called) or "") in PLAIN_WRAPPERS


def _read_when_defined(model: ModuleModel, function: cst.FunctionDef) -> set[str]:
    """What a `def` statement reads as it runs: its decorators, its parameters' defaults
    (`def send(url, _send=send)` keeps the earlier one) and annotations, its return annotation."""
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    parts: list[cst.CSTNode] = [d.decorator for d in function.decorators]
    parts += [p.default for p in every if p.default is not None]
    parts += [p.annotation.annotation for p in every if p.annotation is not None]
    if function.returns is not None:
        parts.append(function.returns.annotation)
    return {name for part in parts for name in model.names_read(part)}
