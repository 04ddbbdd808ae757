"""The filters a Django model's managers put on every query made through them, read with the
standard library's `ast` (only files whose bytes name `get_queryset` or a manager are parsed).

A manager whose `get_queryset()` filters (`return super().get_queryset().filter(merge_status=
PENDING)`) makes every `PendingHousehold.objects....` query name that column: a write through it
(`PendingHousehold.objects.filter(rdi=rdi).update(merge_status=MERGED)`) moves only rows still in
the state the manager names, as if the filter were written at the call. A file gives the managers
it defines (class name -> the columns their `get_queryset()` filters on) and the managers its
models declare (model, lower-cased as the database analysis names tables -> attribute -> class
name); the project joins the two, by class name, wherever each is written. A manager class name
defined twice filters on the columns both definitions name.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from idemlint.analysis.syntax import parsed_if

ManagerColumns = Mapping[str, frozenset[str]]  # manager class -> the columns its get_queryset() filters on
ModelManagers = Mapping[str, Mapping[str, str]]  # model -> manager attribute (`objects`) -> manager class
ManagerFilters = dict[str, dict[str, frozenset[str]]]  # model -> manager attribute -> the columns filtered

_MENTIONS = re.compile(rb"get_queryset|Manager\(")
# what ends a Django lookup (`status__in`): the column is what comes before it
_LOOKUPS = frozenset({"exact", "iexact", "in", "lt", "lte", "gt", "gte", "isnull", "ne"})


def declared_managers(source: bytes | str) -> tuple[dict[str, frozenset[str]], dict[str, dict[str, str]]]:
    """(the managers this file defines that filter, the managers its classes declare); ({}, {})
    for most files."""
    tree = parsed_if(source, _MENTIONS)
    if tree is None:
        return {}, {}
    managers: dict[str, frozenset[str]] = {}
    declared: dict[str, dict[str, str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        columns = _filtered_columns(node)
        if columns:
            managers[node.name] = columns
        for statement in node.body:
            targets = (
                statement.targets
                if isinstance(statement, ast.Assign)
                else [statement.target]
                if isinstance(statement, ast.AnnAssign)  # `objects: PendingManager = PendingManager()`
                else []
            )
            value = getattr(statement, "value", None)
            if (
                len(targets) == 1
                and isinstance(targets[0], ast.Name)
                and isinstance(value, ast.Call)
                and not value.args
                and (manager := _called_name(value.func))
            ):
                declared.setdefault(node.name.lower(), {})[targets[0].id] = manager
    return managers, declared


def _called_name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _filtered_columns(cls: ast.ClassDef) -> frozenset[str]:
    """The columns `get_queryset()` filters on, when it has one way out: `return
    super().get_queryset().filter(status=PENDING)`."""
    method = next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "get_queryset"), None)
    if method is None:
        return frozenset()
    returns = [n for n in ast.walk(method) if isinstance(n, ast.Return) and n.value is not None]
    if len(returns) != 1:
        return frozenset()
    columns: set[str] = set()
    node: ast.expr | None = returns[0].value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in ("filter", "exclude"):
            for keyword in node.keywords:
                parts = (keyword.arg or "").lower().split("__")
                while len(parts) > 1 and parts[-1] in _LOOKUPS:
                    parts.pop()
                if len(parts) == 1 and parts[0]:
                    columns.add(parts[0])  # `order__status` constrains a related row: not this one's
        node = node.func.value
    return frozenset(columns)


def join_manager_filters(
    managers: Iterable[ManagerColumns], declared: Iterable[ModelManagers]
) -> dict[str, dict[str, frozenset[str]]]:
    """model -> manager attribute -> the columns every query through it filters on."""
    filtering: dict[str, frozenset[str]] = {}
    for part in managers:
        for name, columns in part.items():
            filtering[name] = filtering[name] & columns if name in filtering else columns
    joined: dict[str, dict[str, frozenset[str]]] = {}
    for declaring in declared:
        for model, attributes in declaring.items():
            for attribute, manager in attributes.items():
                if filtering.get(manager):
                    joined.setdefault(model, {})[attribute] = filtering[manager]
    return joined
