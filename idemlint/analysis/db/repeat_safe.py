"""Calls and values that come out the same however often a run repeats them: a create-if-absent,
a removal, a queryset `update()` to absolute values, and the values themselves (a literal, a
constant, the clock)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.records import DJANGO_CHAIN
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.knowledge.repeats import CREATE_IF_ABSENT_METHODS, REMOVAL

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def repeat_safe(model: ModuleModel, node: cst.Call, called: str) -> bool:
    """A call whose second run leaves what the first left (idemlint.knowledge.repeats): a
    create-if-absent, a removal, or a queryset `update()` to absolute values (not
    `F("credits") - 1`, not `n=x.n + 1`)."""
    if called in CREATE_IF_ABSENT_METHODS or REMOVAL.match(called):
        return True
    if called != "update" or type(node.func) is not cst.Attribute or not node.args:
        return False
    if type(node.func.value) is not cst.Call and not _bound_to_a_queryset(model, node.func.value):
        return False  # `data.update(...)`: a queryset is `....filter(...).update(...)` or a name bound to one
    return all(arg.keyword is not None and absolute_value(model, arg.value) for arg in node.args)


def _bound_to_a_queryset(model: ModuleModel, receiver: cst.BaseExpression) -> bool:
    """`qs = Column.objects.filter(org=o).order_by("id")`, then `qs.update(...)`: every binding
    of the name is a queryset chain."""
    if type(receiver) is not cst.Name:
        return False
    bindings = model.bindings_of(model.scope_of(receiver), receiver.value)
    return bool(bindings) and all(
        type(b.value) is cst.Call and type(b.value.func) is cst.Attribute and b.value.func.attr.value in DJANGO_CHAIN
        for b in bindings
    )


def absolute_value(model: ModuleModel, value: cst.BaseExpression) -> bool:
    """A value that is the same on every run: a literal, `True`/`None`, a constant
    (`Status.SUSPENDED`, `MAX`), or the clock (`timezone.now()`); not a name that may hold
    what was read (`new_balance`), not arithmetic."""
    if string_value(value) is not None or isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.Name):
        if value.value in ("True", "False", "None") or value.value.isupper():
            return True
        held = model.sole_value(value)  # `now = timezone.now()`, assigned once
        return isinstance(held, cst.Call) and not held.args and absolute_value(model, held)
    if isinstance(value, cst.Attribute):
        last = value.attr.value
        return last.isupper() or bool(model.dotted(value)) and last[:1].isupper()
    if isinstance(value, cst.Call) and not value.args:
        return (model.call_name(value) or "").rsplit(".", 1)[-1] in ("now", "utcnow", "today")
    return False
