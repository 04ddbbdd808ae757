"""Reverse managers: `run.executions.filter(...)`, where a foreign key of the project names
`executions` as its related name (`analysis/managers.related_names`), queries the key's model,
keyed on the instance it hangs off; `run.executions.create(...)` inserts one of its rows."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import chain_calls, chain_model
from idemlint.analysis.db.records import DJANGO_CHAIN, DJANGO_READ_TERMINALS

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")

# related name -> (model, ((key column, the model it points to), ...)): `ProjectIndex.related_managers`
Related = Mapping[str, tuple[str, tuple[tuple[str, str], ...]]]


def related_manager(
    model: ModuleModel, expr: cst.BaseExpression, related: Related
) -> tuple[str, frozenset[str]] | None:
    """The model and key columns of the reverse manager a queryset chain starts from
    (`run.executions.filter(case=case)`, where a foreign key of the project names `executions`
    as its related name), when every call on it is a queryset's; None otherwise. The manager
    hangs off an instance (`run`, `self.run`), not a class (`TestRun.executions` is the field),
    and takes lookups by keyword (a dict's `headers.get("x")`, a list's `items.count(x)` do not).
    Of two keys the model gives one related name, the one pointing to the instance's model, when
    that is known; else both."""
    found = manager_owner(expr, related)
    if found is None:
        return None
    owner, name = found
    table, keys = related[name]
    return table, _key_columns(keys, _instance_model(model, owner))


def _key_columns(keys: tuple[tuple[str, str], ...], owner: str | None) -> frozenset[str]:
    """The columns of a reverse manager's keys that point to the owner's model (all of them
    where none does or the owner's model is unknown)."""
    pointing = frozenset(column for column, target in keys if target and target == owner)
    return pointing or frozenset(column for column, _target in keys)


def _instance_model(model: ModuleModel, name: cst.Name) -> str | None:
    """The model an instance holds, lower-cased: `self` in a model's method (its class), a name
    bound once to a query's row (`run = TestRun.objects.get(pk=pk)`); None when unknown."""
    if name.value == "self":
        owner = model.enclosing_class(name)
        return owner.name.value.lower() if owner is not None else None
    value = model.sole_value(name)
    if isinstance(value, cst.Await):
        value = value.expression
    chain = chain_calls(value) if value is not None else []
    return chain_model(model, chain) if chain else None


def manager_owner(expr: cst.BaseExpression, related: Related) -> tuple[cst.Name, str] | None:
    """The instance a reverse manager's queryset chain hangs off (the name `run` roots, of
    `run.executions.filter(...)`) and the manager's name; see `related_manager`."""
    node = expr
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        method = node.func.attr.value
        if method not in DJANGO_CHAIN | DJANGO_READ_TERMINALS or (
            method not in ("filter", "exclude") and any(a.keyword is None and not a.star for a in node.args)
        ):
            return None
        node = node.func.value
    if not isinstance(node, cst.Attribute) or node.attr.value not in related:
        return None
    owner = instance_root(node.value)
    return (owner, node.attr.value) if owner is not None else None


def instance_root(expr: cst.BaseExpression) -> cst.Name | None:
    """The name an attribute chain starts from when it names an instance (`run` of `run`,
    `self` of `self.run`), not a class (`TestRun`)."""
    while isinstance(expr, cst.Attribute):
        expr = expr.value
    return expr if isinstance(expr, cst.Name) and not expr.value[:1].isupper() else None
