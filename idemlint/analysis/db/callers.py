"""Preconditions held where a write's function is called, or where the write runs once per
row: callers that lock the row or hand over rows a state filter chose
(`analysis/caller_guards.py`), callers that hand over a row they just made
(`analysis/fresh_records.py`), the row's first state, a framework's own transition hooks, an
operator's admin action."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import chain_calls
from idemlint.analysis.db.decisions import just_created
from idemlint.analysis.db.records import DbRead
from idemlint.analysis.flow import leaves
from idemlint.analysis.model import ModuleModel
from idemlint.knowledge.orms import ONE_ROW_LOOKUPS, TRANSITION_HOOKS
from idemlint.knowledge.roles import (
    PERMISSION_HOOKS,
    PERMISSION_SETTING,
    REQUESTING_USER,
    STAFF_STANDING,
    is_operator_tool,
)

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.project_index import ProjectIndex
else:
    cst = LazyModule("libcst", globals(), "cst")


def held_by_callers(model: ModuleModel, record: str | None, node: cst.CSTNode, functions: frozenset[str]) -> bool:
    """`record` is `self` or a parameter of a function among `functions` (by name, or as a
    method by its class's), which the project calls only under a lock or on rows a state
    filter chose (`analysis/caller_guards.py`)."""
    scope = model.enclosing_function(node)
    if record not in ("self", "parameter") or scope is None:
        return False
    block = model.parents.get(scope)
    owner = model.parents.get(block) if block is not None else None
    qualified = f"{owner.name.value}.{scope.name.value}" if isinstance(owner, cst.ClassDef) else ""
    return scope.name.value in functions or qualified in functions  # `Review.decline`: by the record's class


def decided_by_its_callers(
    model: ModuleModel, read: DbRead, node: cst.CSTNode, project: ProjectIndex, retried: bool
) -> bool:
    """The write's precondition is where its function is called, or it runs once per row: every
    caller locks the row or hands over rows a state filter chose; every caller hands over a row
    it just made, and nothing retries the write (only that run writes it: a retry runs it again
    after it may have moved on); the row's first state (`if created:` of a `post_save`
    receiver), frappe's `on_submit`."""
    return (
        held_by_callers(model, read.record, node, project.decided_by_callers)
        or made_by_every_caller(model, read, node, project, retried)
        or first_or_framework_move(model, read.record, node)
    )


def made_by_every_caller(
    model: ModuleModel, read: DbRead, node: cst.CSTNode, project: ProjectIndex, retried: bool
) -> bool:
    """Every caller hands over a row it just made (`analysis/fresh_records.py`), and nothing
    retries the write: only this run has the row, so no other run's test or write comes between."""
    return not retried and _handed_fresh(model, read, node, project.fresh_from_callers)


def _handed_fresh(model: ModuleModel, read: DbRead, node: cst.CSTNode, parameters: frozenset[str]) -> bool:
    """The record is a parameter the project fills only with a row the caller just made
    (`analysis/fresh_records.py`: `function:parameter`), or is loaded by one's key
    (`ProcessingQueue.objects.get(pk=pk)`, `get(pk=upload.pk)`) or by the key column of
    another name it was handed (`get(token=token)`, `function:parameter=token`), not a row it
    leads to (`get(pk=upload.docket_id)`)."""
    scope = model.enclosing_function(node)
    if scope is None:
        return False
    if read.record in ("parameter", "self"):
        return f"{scope.name.value}:{read.instance}" in parameters
    if not isinstance(read.call, cst.Call):
        return False
    for link in chain_calls(read.call):
        if isinstance(link.func, cst.Attribute) and link.func.attr.value == "exclude":
            continue  # `exclude(pk=pk)`: every row but that one
        func = link.func
        unique = (func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")) in ONE_ROW_LOOKUPS
        for arg in link.args:
            if arg.keyword is None:
                continue
            column, value = arg.keyword.value, arg.value
            if column in ("pk", "id"):
                if isinstance(value, cst.Attribute) and value.attr.value in ("pk", "id"):
                    value = value.value
                if isinstance(value, cst.Name) and f"{scope.name.value}:{value.value}" in parameters:
                    return True
            elif unique and isinstance(value, cst.Name) and f"{scope.name.value}:{value.value}={column}" in parameters:
                return True  # `get(token=token)`, handed a fresh row's token
    return False


def first_or_framework_move(model: ModuleModel, record: str | None, node: cst.CSTNode) -> bool:
    """A state write on a record that runs once per row: a parameter's under `if created:`
    (its first state), `self`'s in an ORM's once-per-move hook (frappe's `on_submit`)."""
    if record == "parameter":
        return just_created(model, node)
    return record == "self" and runs_once_per_move(model, node)


def in_an_operator_tool(model: ModuleModel, node: cst.CSTNode) -> bool:
    """`node` runs only for an operator (`knowledge/roles.is_operator_tool`): in a Django admin
    action, a view only staff reach (by its decorators, its class, its permission classes), or
    past a test of the requesting user that lets only staff on. The state it writes is the one
    the operator chose for the rows they picked, also where it moves back."""
    function = model.enclosing_function(node)
    if function is None:
        return False
    code = model.module.code_for_node
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    decorators = [
        (model.dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or "", code(d.decorator))
        for d in function.decorators
    ]
    owner = model.enclosing_class(function)
    bases = [model.dotted(b.value) or "" for b in owner.bases] if owner is not None else []
    return is_operator_tool(params, decorators, bases, _permission_classes(model, function, owner)) or (
        _behind_an_operator_test(model, node, function)
    )


def _permission_classes(model: ModuleModel, function: cst.FunctionDef, owner: cst.ClassDef | None) -> str | None:
    """The DRF permission classes that apply to the function, as written: its own decorator's
    (`@permission_classes([...])`, `@action(permission_classes=[...])`), else its class's, where
    the class picks none per action (`get_permissions`)."""
    code = model.module.code_for_node
    for decorator in function.decorators:
        call = decorator.decorator
        if not isinstance(call, cst.Call):
            continue
        if (model.dotted(call.func) or "").rsplit(".", 1)[-1] == PERMISSION_SETTING and call.args:
            return code(call.args[0].value)
        own = next((a for a in call.args if a.keyword is not None and a.keyword.value == PERMISSION_SETTING), None)
        if own is not None:
            return code(own.value)
    if owner is None or not isinstance(owner.body, cst.IndentedBlock):
        return None
    if any(isinstance(s, cst.FunctionDef) and s.name.value in PERMISSION_HOOKS for s in owner.body.body):
        return None
    for statement in owner.body.body:
        for small in getattr(statement, "body", ()) if isinstance(statement, cst.SimpleStatementLine) else ():
            targets = (
                [t.target for t in small.targets] if isinstance(small, cst.Assign) else [getattr(small, "target", None)]
            )
            value = getattr(small, "value", None)
            if value is not None and any(isinstance(t, cst.Name) and t.value == PERMISSION_SETTING for t in targets):
                return code(value)
    return None


def _behind_an_operator_test(model: ModuleModel, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """`node` runs only where a test of the requesting user let staff on: in the body of `if
    request.user.is_staff:`, or after `if not request.user.is_superuser: raise PermissionDenied`."""
    inner = node
    for ancestor in model.ancestors(node, until=function):
        if (
            isinstance(ancestor, cst.If)
            and model.is_inside(inner, ancestor.body)
            and _only_staff_pass(model, ancestor.test)
        ):
            return True
        inner = ancestor
    body = function.body.body if isinstance(function.body, cst.IndentedBlock) else ()
    for statement in body:
        if model.is_inside(node, statement):
            return False
        if (
            isinstance(statement, cst.If)
            and isinstance(statement.test, cst.UnaryOperation)
            and isinstance(statement.test.operator, cst.Not)
            and _only_staff_pass(model, statement.test.expression)
            and leaves(model, statement.body, (cst.Return, cst.Raise))
        ):
            return True
    return False


def _only_staff_pass(model: ModuleModel, test: cst.BaseExpression) -> bool:
    """Whether only staff make `test` true: the requesting user's `is_staff` or `is_superuser`, on
    each side of an `or` (not `is_staff or order.user == request.user`), on one side of an `and`."""
    if isinstance(test, cst.BooleanOperation):
        sides = (_only_staff_pass(model, test.left), _only_staff_pass(model, test.right))
        return all(sides) if isinstance(test.operator, cst.Or) else any(sides)
    return (
        isinstance(test, cst.Attribute)
        and test.attr.value in STAFF_STANDING
        and model.dotted(test.value) in REQUESTING_USER
    )


def runs_once_per_move(model: ModuleModel, node: cst.CSTNode) -> bool:
    """`node` is in a method the ORM the module imports runs once per checked, locked move of a
    document (frappe's `on_submit`): a state written there follows that move."""
    function, owner = model.enclosing_function(node), model.enclosing_class(node)
    if (
        function is None
        or owner is None
        or not any((model.dotted(base.value) or "").endswith("Document") for base in owner.bases)
    ):
        return False  # a hook of the framework's documents only
    hooks = (
        h for library, h in TRANSITION_HOOKS.items() if any(q.split(".")[0] == library for q in model.imports.values())
    )
    return any(function.name.value in h for h in hooks)
