"""The filters a Django model's managers put on every query made through them, read with the
standard library's `ast` (only files whose bytes name `get_queryset` or a manager are parsed).

A manager whose `get_queryset()` filters (`return super().get_queryset().filter(merge_status=
PENDING)`) makes every `PendingHousehold.objects....` query name that column: a write through it
(`PendingHousehold.objects.filter(rdi=rdi).update(merge_status=MERGED)`) moves only rows still in
the state the manager names, as if the filter were written at the call. A file gives the managers
it defines (qualified class name -> the columns their `get_queryset()` requires to equal or be
among values: an `exclude()` or `isnull` is no precondition) and the managers its models declare
(model, lower-cased as the database analysis names tables -> attribute -> the manager's
qualified name, through the file's imports); the project joins the two wherever each is
written. A model name two classes share is used only if both declare the same managers.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from idemlint.analysis.calls import absolute
from idemlint.analysis.syntax import parsed_if
from idemlint.analysis.unique_keys import (
    FIELD_CALL,
    KEY_MENTIONS,
    UniqueKeys,
    Versioned,
    callee_name,
    declared_keys,
    defines_fields,
)

ManagerColumns = Mapping[str, frozenset[str]]  # manager class -> the columns its get_queryset() filters on
ModelManagers = Mapping[str, Mapping[str, str]]  # model -> manager attribute (`objects`) -> manager class
ManagerFilters = dict[str, dict[str, frozenset[str]]]  # model -> manager attribute -> the columns filtered
# related name -> {(model, foreign key column, the model the key points to)}
RelatedNames = Mapping[str, set[tuple[str, str, str]]]
# related name -> (the model its manager queries, ((key column, the model it points to), ...))
RelatedManagers = dict[str, tuple[str, tuple[tuple[str, str], ...]]]
# the fields whose `related_name` names a manager of many rows (a one-to-one's names one row)
_FOREIGN_KEYS = frozenset({"ForeignKey", "ParentalKey"})

_MENTIONS = re.compile(rb"get_queryset|Manager\(|Field\(|ForeignKey\(|class Meta")
# what a file must name to declare a model's keys or managers: either module's test
_MODEL_MENTIONS = re.compile(KEY_MENTIONS.pattern + b"|" + _MENTIONS.pattern)
# the lookups that require a column to hold one of some values (`status__in`)
_REQUIRES = frozenset({"exact", "iexact", "in"})


def declared_managers(
    source: bytes | str, tree: ast.Module | None = None, module: str = "", is_package: bool = False
) -> tuple[dict[str, frozenset[str]], dict[str, dict[str, str]]]:
    """(the managers this file defines, by qualified name, and the columns each filters on;
    the managers its classes declare, by the qualified name the file's imports give them);
    ({}, {}) for most files. `module`: the file's module name ("" when unknown: names stay
    as the file spells them)."""
    tree = tree or parsed_if(source, _MENTIONS)
    if tree is None:
        return {}, {}
    imported = _imported_names(tree, module, is_package)
    prefix = f"{module}." if module else ""
    managers: dict[str, frozenset[str]] = {}
    declared: dict[str, dict[str, str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        if node.name.endswith("Manager") or any(
            isinstance(s, ast.FunctionDef) and s.name == "get_queryset" for s in node.body
        ):
            managers[prefix + node.name] = _filtered_columns(node)  # none: a manager that filters nothing
        attributes: dict[str, str] = {}
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
                and not value.keywords
                and (manager := callee_name(value))
                and not FIELD_CALL.search(manager)
            ):
                attributes[targets[0].id] = _qualified(value.func, imported, prefix)
        if attributes or defines_fields(node):
            declared[node.name.lower()] = attributes  # none: a model on Django's own manager
    return managers, declared


class ModelFacts(NamedTuple):
    """What a file declares of its models."""

    unique_keys: UniqueKeys  # `unique_keys.declared_keys`
    versioned: Versioned  # whether each compares a version column
    managers: tuple[dict[str, frozenset[str]], dict[str, dict[str, str]]]  # `declared_managers`
    related: RelatedNames  # `related_names`
    private: frozenset[str]  # `private_fields`


def model_facts(source: bytes | str, module: str = "", is_package: bool = False) -> ModelFacts:
    """What a file declares of its models, from one parse."""
    tree = parsed_if(source, _MODEL_MENTIONS)
    if tree is None:
        return ModelFacts({}, {}, ({}, {}), {}, frozenset())
    unique_keys, versioned = declared_keys(source, tree)
    managers = declared_managers(source, tree, module, is_package)
    return ModelFacts(unique_keys, versioned, managers, related_names(tree), private_fields(tree))


def private_fields(tree: ast.Module) -> frozenset[str]:
    """The fields or columns a file's models declare under a name with a leading underscore
    (`_status = Column("status", ...)`, behind a hybrid property): only those of such names
    are stored; any other (`review._close_description = ...`) the object keeps in memory."""
    return frozenset(
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef) and defines_fields(node)
        for statement in node.body
        if isinstance(statement, (ast.Assign, ast.AnnAssign))
        and isinstance(statement.value, ast.Call)
        and FIELD_CALL.search(callee_name(statement.value))
        for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])
        if isinstance(target, ast.Name) and target.id.startswith("_")
    )


def related_names(tree: ast.Module) -> RelatedNames:
    """The reverse managers a file's foreign keys name (`run = ForeignKey(TestRun,
    related_name="executions")` in `TestExecution`): `run.executions` queries the model that
    declares the key, and only its rows whose key column is the instance. related name ->
    {(model, lower-cased as tables are named; the key column; the model it points to)}. A name
    with a placeholder (`"%(class)s_set"`) or none (`"+"`) names no manager; the default
    `<model>_set` is read where it is used (`analysis/db/chains.py`)."""
    found: dict[str, set[tuple[str, str, str]]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for statement in node.body:
            value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
            targets = statement.targets if isinstance(statement, ast.Assign) else [getattr(statement, "target", None)]
            if not isinstance(value, ast.Call) or len(targets) != 1 or not isinstance(targets[0], ast.Name):
                continue
            if callee_name(value) not in _FOREIGN_KEYS:
                continue
            for keyword in value.keywords:
                name = keyword.value.value if isinstance(keyword.value, ast.Constant) else None
                if keyword.arg == "related_name" and isinstance(name, str) and name.isidentifier():
                    found.setdefault(name, set()).add((node.name.lower(), targets[0].id, _key_target(value, node)))
    return found


def _key_target(field: ast.Call, owner: ast.ClassDef) -> str:
    """The model a foreign key points to, lower-cased: `ForeignKey(TestRun, ...)`,
    `ForeignKey("testruns.TestRun", ...)`, `to=...`, `"self"`; "" when unknown."""
    given = field.args[0] if field.args else next((k.value for k in field.keywords if k.arg == "to"), None)
    if isinstance(given, ast.Constant) and isinstance(given.value, str):
        name = given.value.rsplit(".", 1)[-1]
        return owner.name.lower() if name == "self" else name.lower()
    if isinstance(given, ast.Name):
        return given.id.lower()
    return given.attr.lower() if isinstance(given, ast.Attribute) else ""


def join_related_names(parts: Iterable[RelatedNames]) -> RelatedManagers:
    """related name -> (the model its manager queries, its keys: (column, the model each points
    to), sorted): a name two models give their keys (`tags` on two models) stays unknown."""
    joined: dict[str, set[tuple[str, str, str]]] = {}
    for part in parts:
        for name, keys in part.items():
            joined.setdefault(name, set()).update(keys)
    return {
        name: (next(iter(models)), tuple(sorted((column, target) for _m, column, target in keys)))
        for name, keys in sorted(joined.items())
        if len(models := {model for model, _c, _t in keys}) == 1
    }


def _imported_names(tree: ast.Module, module: str, is_package: bool) -> dict[str, str]:
    """The names the file's `from ... import ...` bind, qualified (`from .managers import
    PendingManager` in `app.models` gives `app.managers.PendingManager`; in
    `app/models/__init__.py`, `app.models.managers.PendingManager`)."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            origin = absolute("." * node.level + (node.module or ""), module, is_package)
            for alias in node.names:
                found[alias.asname or alias.name] = f"{origin}.{alias.name}" if origin else alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
    return found


def _qualified(func: ast.expr, imported: Mapping[str, str], prefix: str) -> str:
    """`PendingManager` -> where it was imported from (or this module); `managers.Pending`
    -> the module `managers` names, and the class."""
    if isinstance(func, ast.Name):
        return imported.get(func.id, prefix + func.id)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{imported.get(func.value.id, func.value.id)}.{func.attr}"
    return func.attr if isinstance(func, ast.Attribute) else ""


def _filtered_columns(cls: ast.ClassDef) -> frozenset[str]:
    """The columns `get_queryset()` (its last definition, as Python keeps) requires to equal a
    value or be among some, when it has one way out: `return
    super().get_queryset().filter(status=PENDING)`. Not an `exclude()`, nor `isnull` or `ne`."""
    methods = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "get_queryset"]
    returns = [n for n in ast.walk(methods[-1]) if isinstance(n, ast.Return) and n.value is not None] if methods else []
    if len(returns) != 1:
        return frozenset()
    columns: set[str] = set()
    node: ast.expr | None = returns[0].value
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "filter":
            for keyword in node.keywords:
                parts = (keyword.arg or "").lower().split("__")
                if len(parts) > 1 and parts[-1] in _REQUIRES:
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
    models: dict[str, Mapping[str, str] | None] = {}
    for declaring in declared:
        for model, attributes in declaring.items():
            # two classes of one name (two apps' `Order`) that declare different managers: unknown
            models[model] = attributes if models.get(model, attributes) == attributes else None
    joined: dict[str, dict[str, frozenset[str]]] = {}
    for model, found in models.items():
        for attribute, manager in (found or {}).items():
            if filtering.get(manager):
                joined.setdefault(model, {})[attribute] = filtering[manager]
    return joined
