"""Task decorators a module makes of its own: `def task(*args, **kwargs): return
app.task(*args, **kwargs, autoretry_for=...)`, then `@task(shared=False)` on each task. The
tasks it decorates are made by the call it returns, with its settings and those the decoration
adds (which win, as Celery merges them). (They are not judged there: the call passes on the
decoration's `**kwargs`, so what it sets depends on each use.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")

# what the returned call's name ends with: a task queue's task decorator
_TASK_DECORATORS = frozenset({"task", "shared_task"})


def made_by_factory(model: ModuleModel, decorator: cst.BaseExpression) -> tuple[str, cst.Call] | None:
    """The task decorator a function of this module returns, where `decorator` names (or
    calls) one whose body (a docstring aside) is that `return`: its name, and the call whose
    settings apply: the returned call's keywords, and the decoration's over them."""
    site = decorator if isinstance(decorator, cst.Call) else None
    factory = model.module_defs.get(site.func.value if site is not None and isinstance(site.func, cst.Name) else "")
    if site is None and isinstance(decorator, cst.Name):
        factory = model.module_defs.get(decorator.value)
    if not isinstance(factory, cst.FunctionDef):
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
    if name.rsplit(".", 1)[-1] not in _TASK_DECORATORS:
        return None
    forwards = any(a.star == "**" for a in made.args)  # else the decoration's keywords go to the factory alone
    given = [a for a in site.args if a.keyword is not None] if site is not None and forwards else []
    named = {a.keyword.value for a in given if a.keyword is not None}
    kept = [a for a in made.args if a.keyword is None or a.keyword.value not in named]
    return name, made.with_changes(args=[*kept, *given]) if given else made
