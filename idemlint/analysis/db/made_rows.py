"""Rows a function makes itself: an update keyed on the primary key of a row the same function
just inserted (`order = Order(...); session.add(order); session.flush()`, then
`update(Order).where(Order.id == order.id)`; `ticket = Ticket.objects.create(...)`, then
`Ticket.objects.filter(pk=ticket.pk).update(...)`) writes a row only this run knows: no other
writer has its key, a duplicate delivery makes a row of its own, so there is no state the
write could move back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import chain_calls, chain_root
from idemlint.analysis.db.scopes import source_order
from idemlint.analysis.flow import just_created, origin_nodes
from idemlint.knowledge.orms import CREATES_A_ROW, QUEUES_A_CALL, ROW_FILTERS

if TYPE_CHECKING:
    from collections.abc import Iterator

    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")

_KEYS = frozenset({"id", "pk"})


def keyed_on_a_row_made_here(model: ModuleModel, call: cst.Call | None) -> bool:
    """Whether the update `call` selects its rows by the primary key of a row of the same model
    that this function made (a constructor call, `Model.objects.create(...)`)."""
    if call is None:
        return False
    scope = model.scope_of(call)
    return any(_made_here(model, scope, table, value, call) for table, value in _key_values(model, call))


def finds_only_rows_made_here(model: ModuleModel, lookup: cst.Call, insert: cst.Call) -> bool:
    """A query that chooses by a row this function made and stored, or by its key (`filter(
    objective=objective, ...)` after `objective = Objective(title=...); objective.save()`), with
    nothing before the insert handing the row elsewhere: no other run can name that row, so the
    rows it finds are this run's own (a duplicate run checks and fills its own)."""
    scope = model.scope_of(lookup)
    for call in chain_calls(lookup):
        if not isinstance(call.func, cst.Attribute) or call.func.attr.value not in ROW_FILTERS:
            continue  # `exclude(objective=objective)` finds the rows of every other run
        for arg in call.args:
            value = arg.value
            if arg.keyword is not None and isinstance(value, cst.Attribute) and value.attr.value in _KEYS:
                value = value.value  # `objective_id=objective.pk`
            if (
                arg.keyword is not None
                and isinstance(value, cst.Name)
                and (
                    _made_and_kept(model, scope, value.value, insert)
                    or _just_inserted(model, scope, value.value, lookup)
                )
            ):
                return True
    return False


def _just_inserted(model: ModuleModel, scope: cst.CSTNode, name: str, lookup: cst.Call) -> bool:
    """`instance` of a `post_save` receiver, never bound again, under `if created:`: the row the
    insert that sent the signal made, and only that run takes this branch."""
    bound = model.bindings_of(scope, name)
    return name == "instance" and all(b.kind == "param" for b in bound) and just_created(model, lookup)


def _made_and_kept(model: ModuleModel, scope: cst.CSTNode, name: str, until: cst.Call) -> bool:
    """`name` is bound once, to a new row of a model (`Model.objects.create(...)`, or `Model(...)`
    built with keywords naming no key and then stored), and kept private until `until`."""
    bindings = model.bindings_of(scope, name)
    if len(bindings) != 1 or bindings[0].value is None:
        return False
    made = bindings[0].value
    made = made.expression if isinstance(made, cst.Await) else made
    if not isinstance(made, cst.Call):
        return False
    built = (
        isinstance(made.func, cst.Name)
        and made.func.value[:1].isupper()
        and all(a.keyword is not None and a.keyword.value not in _KEYS for a in made.args)
        and _stored(model, scope, name)
    )
    return (built or _creates(made) and _model_named(made) is not None) and _kept_private(model, scope, name, until)


def _key_values(model: ModuleModel, call: cst.Call) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(the model's name, the value its primary key is compared with) in the update's filter:
    `Order.id == value` (either side), `Order.objects.filter(pk=value)`, also in a statement
    bound to a name first (`query = update(Order).where(...)`, `session.execute(query)`)."""
    for node in origin_nodes(model, call):
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            target = node.comparisons[0]
            if not isinstance(target.operator, cst.Equal):
                continue
            for key, value in ((node.left, target.comparator), (target.comparator, node.left)):
                table = _model_key(key)
                if table:
                    yield table, value
        elif (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value in ("filter", "filter_by", "get")
        ):
            root = _model_named(node)
            for arg in node.args:
                if root and arg.keyword is not None and arg.keyword.value in _KEYS:
                    yield root, arg.value


def _model_key(expr: cst.BaseExpression) -> str | None:
    """`Order.id`: the model's name."""
    if isinstance(expr, cst.Attribute) and expr.attr.value in _KEYS and isinstance(expr.value, cst.Name):
        name = expr.value.value
        return name if name[:1].isupper() else None
    return None


def _model_named(call: cst.Call) -> str | None:
    """`Order` of `Order.objects.filter(...)`: a class's name the chain starts from."""
    root = chain_root(call)
    return root.value if isinstance(root, cst.Name) and root.value[:1].isupper() else None


def _made_here(model: ModuleModel, scope: cst.CSTNode, table: str, value: cst.BaseExpression, write: cst.Call) -> bool:
    """`value` is the key (`row.id`, `row.pk`, or a name bound to one) of a row of `table` that
    this function made and stored (`Model.objects.create(...)`, or a constructor the function
    then hands to `session.add()` or `save()`s: not an unsaved stub, `Order(pk=order_id)`), where
    the row's name is bound once, and nothing before the write hands the row or its key to
    another process (a queued task given `row.pk` may move the row first)."""
    for node in origin_nodes(model, value):
        if not (isinstance(node, cst.Attribute) and node.attr.value in _KEYS and isinstance(node.value, cst.Name)):
            continue
        name = node.value.value
        bindings = model.bindings_of(scope, name)
        if len(bindings) != 1 or bindings[0].value is None:
            continue
        made = bindings[0].value
        made = made.expression if isinstance(made, cst.Await) else made
        if (
            _makes(made, table)
            and (_creates(made) or _stored(model, scope, name))
            and _kept_private(model, scope, name, write)
        ):
            return True
    return False


def _creates(value: cst.BaseExpression) -> bool:
    calls = chain_calls(value)
    last = calls[0].func if calls else None
    return isinstance(last, cst.Attribute) and last.attr.value in CREATES_A_ROW


def _stored(model: ModuleModel, scope: cst.CSTNode, name: str) -> bool:
    """`row.save()`, `session.add(row)`, `session.add_all([row, ...])`."""
    for node in model.iter_nodes(scope):
        if not (isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)):
            continue
        method = node.func.attr.value
        if method in ("save", "asave") and isinstance(node.func.value, cst.Name) and node.func.value.value == name:
            return True
        if method in ("add", "add_all", "merge") and _handed(model, node, {name}):
            return True
    return False


def _handed(model: ModuleModel, call: cst.Call, names: set[str]) -> bool:
    """One of `names` is in the call's arguments (`add(row)`, `add_all([row])`, `delay(row_id)`)."""
    return any(
        isinstance(n, cst.Name) and n.value in names for a in call.args for n in (a.value, *model.iter_nodes(a.value))
    )


# what hands work to another process or thread, which may write the row before this run does: a
# task queue (`knowledge/orms.QUEUES_A_CALL`), a pool or thread, a callback run at commit
_HANDS_OFF = QUEUES_A_CALL | {"send_task", "enqueue", "submit", "start", "create_task", "on_commit"}


def _kept_private(model: ModuleModel, scope: cst.CSTNode, name: str, write: cst.Call) -> bool:
    """No call before `write` that hands work elsewhere (a task queued, a thread started, an
    `on_commit` callback) is given `name`, its key, or a name bound to its key."""
    keys = {name} | {
        bound
        for bound, bindings in (model.bindings.get(scope) or {}).items()
        for b in bindings
        if isinstance(b.value, cst.Attribute)
        and isinstance(b.value.value, cst.Name)
        and b.value.value.value == name
        and b.value.attr.value in _KEYS
    }
    order = source_order(model, scope)
    until = order.get(write, len(order))
    for node in model.iter_nodes(scope):
        if not isinstance(node, cst.Call) or order.get(node, until) >= until or model.is_inside(write, node):
            continue
        called = model.dotted(node.func) or ""
        if called.rsplit(".", 1)[-1] in _HANDS_OFF and _handed(model, node, keys):
            return False
    return True


def _makes(value: cst.BaseExpression, table: str) -> bool:
    """`Order(...)`, `Order.objects.create(...)`."""
    if not isinstance(value, cst.Call):
        return False
    if isinstance(value.func, cst.Name):
        return value.func.value == table
    return _creates(value) and _model_named(value) == table
