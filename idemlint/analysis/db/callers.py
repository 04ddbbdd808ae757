"""Preconditions held where a write's function is called, or where the write runs once per
row: callers that lock the row or hand over rows a state filter chose
(`analysis/caller_guards.py`), callers that hand over a row they just made
(`analysis/fresh_records.py`), the row's first state, a framework's own transition hooks, an
operator's admin action."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import chain_calls
from idemlint.analysis.db.records import DbRead
from idemlint.analysis.flow import just_created
from idemlint.analysis.model import ModuleModel
from idemlint.knowledge.orms import KEY_CONVERSIONS, ONE_ROW_LOOKUPS, TRANSITION_HOOKS
from idemlint.knowledge.roles import RPC_ENDPOINT_TARGETS, is_admin_action

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
            column, value = arg.keyword.value, _unconverted(model, scope, arg.value)
            if column in ("pk", "id"):
                if isinstance(value, cst.Attribute) and value.attr.value in ("pk", "id"):
                    value = value.value
                if isinstance(value, cst.Name) and f"{scope.name.value}:{value.value}" in parameters:
                    return True
            elif unique and isinstance(value, cst.Name) and f"{scope.name.value}:{value.value}={column}" in parameters:
                return True  # `get(token=token)`, handed a fresh row's token
    return False


def _unconverted(model: ModuleModel, scope: cst.FunctionDef, value: cst.BaseExpression) -> cst.BaseExpression:
    """The key a lookup is given, past a conversion (`int(search_id)`), also through a name
    bound once to one (`sid = int(search_id)`)."""
    if isinstance(value, cst.Name):
        bound = model.bindings_of(scope, value.value)
        if len(bound) == 1 and bound[0].kind == "assign" and isinstance(bound[0].value, cst.Call):
            value = bound[0].value
    if (
        isinstance(value, cst.Call)
        and model.call_name(value) in KEY_CONVERSIONS
        and len(value.args) == 1
        and value.args[0].keyword is None
    ):
        return value.args[0].value
    return value


def first_or_framework_move(model: ModuleModel, record: str | None, node: cst.CSTNode) -> bool:
    """A state write on a record that runs once per row: a parameter's under `if created:`
    (its first state), `self`'s in an ORM's once-per-move hook (frappe's `on_submit`)."""
    if record == "parameter":
        return just_created(model, node)
    return record == "self" and runs_once_per_move(model, node)


def in_an_admin_action(model: ModuleModel, node: cst.CSTNode) -> bool:
    """`node` is in a Django admin action (`knowledge/roles.is_admin_action`): the state it
    writes is the one the operator chose for the rows they picked, also where it moves back."""
    function = model.enclosing_function(node)
    if function is None:
        return False
    params = [p.name.value for p in (*function.params.posonly_params, *function.params.params)]
    decorators = [
        model.dotted(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) or ""
        for d in function.decorators
    ]
    owner = model.enclosing_class(function)
    bases = [model.dotted(b.value) or "" for b in owner.bases] if owner is not None else []
    return is_admin_action(params, decorators, bases)


def decided_elsewhere(model: ModuleModel, node: cst.CSTNode) -> bool:
    """`node` writes a state someone chose for it: an operator's admin action, or an RPC
    endpoint's method, reached by a message sent at most once (`dispatched_at_most_once`)."""
    return in_an_admin_action(model, node) or dispatched_at_most_once(model, node)


def dispatched_at_most_once(model: ModuleModel, node: cst.CSTNode) -> bool:
    """`node` is in a public method of an RPC server's endpoint class (`class VolumeManager:
    target = oslo_messaging.Target(version=...)`): the message that runs it is sent at most
    once and never redelivered, and the API that sent it chose the move (cinder's and nova's
    `conditional_update` claims), so no duplicate of it moves the record back."""
    function = model.enclosing_function(node)
    owner = model.enclosing_class(function) if function is not None else None
    if owner is None or function is None or function.name.value.startswith("_"):
        return False
    block = model.parents.get(function)
    if block is None or model.parents.get(block) is not owner:
        return False  # a function nested in a method runs when that method says
    return any(
        isinstance(small, cst.Assign)
        and any(isinstance(t.target, cst.Name) and t.target.value == "target" for t in small.targets)
        and isinstance(small.value, cst.Call)
        and (model.qualname(small.value.func) or "") in RPC_ENDPOINT_TARGETS
        for statement in owner.body.body
        if isinstance(statement, cst.SimpleStatementLine)
        for small in statement.body
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
