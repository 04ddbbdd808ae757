"""Whether a write's row count is read: the call's result used, `cursor.rowcount` read after
it, or the `session.execute(stmt)` that runs an update statement."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.records import EXECUTE_METHODS
from idemlint.analysis.db.scopes import names_in, source_order
from idemlint.analysis.flow import is_load
from idemlint.analysis.model import ModuleModel

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def result_used(model: ModuleModel, call: cst.Call | None) -> bool:
    """Whether the value of `call` is used: not a bare expression statement, and if
    assigned, the variable is read somewhere else in the function."""
    if call is None:
        return False
    node: cst.CSTNode = call
    parent = model.parents.get(node)
    while isinstance(parent, cst.Await):
        node, parent = parent, model.parents.get(parent)
    if isinstance(parent, cst.Expr):
        return False
    if isinstance(parent, (cst.Assign, cst.AnnAssign)):
        targets = [t.target for t in parent.targets] if isinstance(parent, cst.Assign) else [parent.target]
        names = {t.value for t in targets if isinstance(t, cst.Name)}
        if not names:
            return True
        scope = model.scope_of(call)
        index = names_in(model, scope)
        return any(n not in targets and _is_read(model, n) for name in names for n in index.get(name, ()))
    return True


def rowcount_read_after(model: ModuleModel, call: cst.Call, receiver: str) -> bool:
    scope = model.scope_of(call)
    position = source_order(model, scope)
    start = position.get(call, 0)
    for name in ("rowcount", "statusmessage"):
        for node in names_in(model, scope).get(name, ()):
            parent = model.parents.get(node)
            if isinstance(parent, cst.Attribute) and parent.attr is node and model.dotted(parent.value) == receiver:
                if position.get(node, 0) > start:
                    return True
    return False


def executor_of(model: ModuleModel, statement_call: cst.Call) -> cst.Call | None:
    """The `session.execute(stmt)` that runs an update statement, directly or via a name."""
    parent = model.parents.get(statement_call)
    if isinstance(parent, cst.Arg):
        outer = model.parents.get(parent)
        if (
            isinstance(outer, cst.Call)
            and isinstance(outer.func, cst.Attribute)
            and outer.func.attr.value in EXECUTE_METHODS
        ):
            return outer
    statement = model.statement_of(statement_call)
    if (
        isinstance(statement, cst.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0].target, cst.Name)
    ):
        name = statement.targets[0].target.value
        scope = model.scope_of(statement_call)
        for call in model.calls:
            if (
                model.scope_of(call) is scope
                and isinstance(call.func, cst.Attribute)
                and call.func.attr.value in EXECUTE_METHODS
            ):
                if call.args and isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == name:
                    return call
    return None


def _is_read(model: ModuleModel, name: cst.Name) -> bool:
    """A use of the variable's value: a load (see flow.is_load) that is not an assignment target."""
    parent = model.parents.get(name)
    return is_load(model, name) and not (isinstance(parent, cst.AssignTarget) and parent.target is name)
