"""Task decorators a module makes of its own: `def task(*args, **kwargs): return
app.task(*args, **kwargs, autoretry_for=...)`, then `@task(shared=False)` on each task. The
tasks it decorates are made by the call it returns, with its settings and those the decoration
passes on through `**kwargs` (Python refuses a keyword given twice, so the two never overlap).
Both are judged where they are written."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.knowledge.retries import TASK_DECORATORS

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def made_by_factory(model: ModuleModel, decorator: cst.BaseExpression) -> tuple[str, cst.Call] | None:
    """The task decorator a function of this module returns, where `decorator` names (or
    calls) one whose body (a docstring aside) is that `return`: its name, and the call whose
    settings apply: the returned call's keywords and those the decoration passes on."""
    site = decorator if isinstance(decorator, cst.Call) else None
    named = site.func if site is not None else decorator
    if not isinstance(named, cst.Name) or named.value in model.imports:
        return None
    factory = next(
        (s for s in reversed(model.module.body) if isinstance(s, cst.FunctionDef) and s.name.value == named.value), None
    )  # the module's own function of that name, not a method that shares it
    if factory is None:
        return None
    body = list(factory.body.body) if isinstance(factory.body, cst.IndentedBlock) else [factory.body]
    if factory.get_docstring() is not None:
        body = body[1:]
    if len(body) != 1 or not isinstance(body[0], (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return None
    returned = body[0].body[0] if len(body[0].body) == 1 else None
    if not isinstance(returned, cst.Return) or not isinstance(returned.value, cst.Call):
        return None
    made = returned.value
    name = model.qualname(made.func) or ""
    if name.rsplit(".", 1)[-1] not in TASK_DECORATORS:
        return None
    forwards = any(a.star == "**" for a in made.args)  # else the decoration's keywords go to the factory alone
    given = [a for a in site.args if a.keyword is not None] if site is not None and forwards else []
    kept = [a for a in made.args if not a.star]  # what `*args, **kwargs` pass on is the decoration's
    return name, made.with_changes(args=[*kept, *given]) if len(kept) != len(made.args) or given else made
