"""Records an object holds in an attribute (`self.round` of a manager, `self.object` of a view,
a related row): where one is a stored row this method did not load, and where it is an object
the class builds itself (a checkpoint, a progress record) or one the method sets."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.calls import self_attribute_values
from idemlint.analysis.db.chains import chain_calls, locks, locks_by_keyword
from idemlint.analysis.db.records import record_name
from idemlint.analysis.db.scopes import source_order
from idemlint.analysis.model import ModuleModel
from idemlint.knowledge.locks import names_a_transaction
from idemlint.knowledge.orms import DATABASE_IMPORTS

if TYPE_CHECKING:
    import libcst as cst

    Assignment = tuple[cst.Attribute, cst.BaseExpression, cst.CSTNode]
else:
    cst = LazyModule("libcst", globals(), "cst")


def assignments_to(model: ModuleModel, scope: cst.CSTNode, record: str) -> list[Assignment]:
    """The attribute assignments (`record.x = ...`) of one record in one scope, from an index
    of the module's built once (a method asks it of each record it writes)."""
    index = model.memo.get("db.assignments_by_record")
    if index is None:
        index = {}
        for target, value, statement in model.attribute_assigns:
            name = record_name(target.value)
            if name is not None:
                index.setdefault((id(model.scope_of(target)), name), []).append((target, value, statement))
        model.memo["db.assignments_by_record"] = index
    return index.get((id(scope), record), [])


def uses_database(model: ModuleModel) -> bool:
    """Whether the module imports a database library or the project's models: its setters and
    saved instances are rows, not a desktop app's objects or a worker's process state."""
    found = model.memo.get("db.uses_database")
    if found is None:
        found = any(DATABASE_IMPORTS.search(target.lstrip(".")) for target in model.imports.values())
        model.memo["db.uses_database"] = found
    return bool(found)


def held_anchor(model: ModuleModel, scope: cst.FunctionDef, name: str) -> tuple[cst.CSTNode, str] | None:
    """`self.round` in a method that does not set it before writing it: a record the object
    holds, loaded by whoever first used it (`__init__` handed it, a view's cached property, a
    foreign key's first access). Anchored, as `self` is, at the method's `self`; not in a module
    that stores nothing, nor where the class builds the object itself (`self.checkpoint =
    Checkpoint(path)`: its own object, not a row someone loaded)."""
    params = scope.params.params
    owner = model.enclosing_class(scope)
    if not params or params[0].name.value != "self" or owner is None:
        return None
    if any(decorator_name(d) in ("classmethod", "staticmethod") for d in scope.decorators):
        return None
    if not uses_database(model):
        return None  # a game's player, a worker's job: nothing a database stores
    attribute = name.partition(".")[2]
    if _built_by_its_class(model, owner, attribute):
        return None
    position = source_order(model, scope)
    writes = [position.get(statement, -1) for _t, _v, statement in assignments_to(model, scope, name)]
    first_write = min((w for w in writes if w >= 0), default=-1)
    for target, _value, statement in assignments_to(model, scope, "self"):
        if target.attr.value == attribute and position.get(statement, -1) < first_write:
            return None  # `self.round = ...` before the write: a read this method makes (judged as one), or not known
    return params[0], "held"


def _built_by_its_class(model: ModuleModel, owner: cst.ClassDef, attribute: str) -> bool:
    """A method of the class sets `self.<attribute>` to an object it constructs (`self.checkpoint
    = Checkpoint(path)`, `Progress()`), not a `Model.objects...` lookup."""
    return any(
        isinstance(value, cst.Call) and (model.dotted(value.func) or "").rsplit(".", 1)[-1][:1].isupper()
        for value in self_attribute_values(model).get((id(owner), attribute), ())
    )


def held_under_a_lock(model: ModuleModel, scope: cst.FunctionDef, name: str) -> bool:
    """`self.payment` (`name`) in a method of a class that, or a base of which in this module,
    sets it (its constructor, say) to a row it loads under a row lock (`rows =
    Payment.objects.filter(pk=pk).select_for_update()`, `self.payment = rows[0]`), where nothing
    in the module sets that attribute of anything otherwise: the object holds a locked row, and
    Django refuses such a load outside a transaction, so whoever uses the object holds one. Not
    where the load sits in a transaction the method opens (the lock ends with the block), nor
    where the value only may be the locked row (`a if lock else b`, `payment or ...`) or is a
    row reached from it (`...select_for_update().get(pk=pk).payment`). A subclass in another
    module that sets it otherwise is not seen."""
    owner = model.enclosing_class(scope)
    if owner is None:
        return False
    attribute = name.partition(".")[2]
    values = self_attribute_values(model)
    if not any(values.get((id(cls), attribute)) for cls in _in_module_ancestry(model, owner)):
        return False
    return all(
        _loads_locked(model, value, statement)
        for target, value, statement in model.attribute_assigns
        if target.attr.value == attribute
    )


def _loads_locked(model: ModuleModel, value: cst.BaseExpression, statement: cst.CSTNode) -> bool:
    """`Model.objects.select_for_update().get(...)` (or a load locking by keyword), itself or
    through a name bound once to it, or `rows[0]` / `rows.first()` of such a locked queryset;
    not inside a `with` that opens a transaction."""
    if transaction_block(model, statement) is not None:
        return False
    if isinstance(value, cst.Subscript):
        value = value.value  # `rows[0]`
    elif (
        isinstance(value, cst.Call)
        and isinstance(value.func, cst.Attribute)
        and value.func.attr.value in ("first", "last", "get")
        and isinstance(value.func.value, cst.Name)
    ):
        value = value.func.value  # `rows.first()`
    if isinstance(value, cst.Name):
        bound = model.resolve(model.scope_of(value), value.value)
        if len(bound) != 1 or bound[0].value is None or bound[0].kind != "assign":
            return False
        return _loads_locked(model, bound[0].value, bound[0].statement)
    return isinstance(value, cst.Call) and (locks(chain_calls(value)) or locks_by_keyword(value))


def transaction_block(model: ModuleModel, node: cst.CSTNode) -> cst.With | None:
    """The innermost `with transaction.atomic():` (any `with` naming a transaction or a
    session's `begin()`) `node` sits in inside its function: a lock taken there ends with it."""
    scope = model.scope_of(node)
    for ancestor in model.ancestors(node):
        if ancestor is scope:
            return None
        if isinstance(ancestor, cst.With) and any(
            names_a_transaction(model.dotted(item.item.func if isinstance(item.item, cst.Call) else item.item) or "")
            for item in ancestor.items
        ):
            return ancestor
    return None


def _in_module_ancestry(model: ModuleModel, owner: cst.ClassDef) -> list[cst.ClassDef]:
    """The class and the bases of it this module defines, nearest first."""
    classes = {c.name.value: c for c in model.iter_nodes(model.module) if isinstance(c, cst.ClassDef)}
    found: list[cst.ClassDef] = []
    pending = [owner]
    while pending:
        cls = pending.pop()
        if cls in found:
            continue
        found.append(cls)
        pending.extend(
            classes[b.value.value] for b in cls.bases if isinstance(b.value, cst.Name) and b.value.value in classes
        )
    return found


def decorator_name(decorator: cst.Decorator) -> str:
    node = decorator.decorator
    node = node.func if isinstance(node, cst.Call) else node
    return node.attr.value if isinstance(node, cst.Attribute) else node.value if isinstance(node, cst.Name) else ""
