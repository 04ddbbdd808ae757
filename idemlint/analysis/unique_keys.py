"""The keys a project's models declare, read with the standard library's `ast` (only files
whose bytes name one are parsed): which column sets the database itself keeps unique, and which
models the ORM writes only at the version it read.

A row inserted after a query found it absent is a duplicate only where nothing but that
query stands between two racing runs; a unique key makes the second insert fail instead.
Read here:
- a field declared `unique=True` or `primary_key=True` (Django fields, SQLAlchemy `Column`
  and `mapped_column`), and a Django `OneToOneField`;
- Django's `Meta.unique_together` and `Meta.constraints = [UniqueConstraint(fields=[...])]`;
- SQLAlchemy's `__table_args__ = (UniqueConstraint("a", "b"), ...)` (or the columns themselves,
  `UniqueConstraint(a, b)`) and `Index("ix_name", "a", "b", unique=True)` (its first argument
  is the index's name, not a column).
A column inside `Lower(...)`, `func.lower(...)` and the like counts as the column (equal values
clash there too); a key over another expression (`func.concat(a, b)`) keeps no plain column set
unique, nor does one unique only where a condition holds (`postgresql_where=`, `condition=`),
unless the condition is one a new row meets: columns unset, as soft deletion keeps its live
rows (`condition=Q(deleted_at__isnull=True)`), or the key's own columns set.

A version column makes the ORM's own write of a loaded instance conditional on the row being
unchanged since it was read (a stale flush fails), so a decision taken on that instance is
re-checked by the write: SQLAlchemy's `__mapper_args__ = {"version_id_col": version_id}` and
django-concurrency's version fields (`IntegerVersionField`, `AutoIncVersionField`). A bulk
`UPDATE` is not checked so. A model is versioned only if every class of its name is.

Models are named by their class name, lower-cased, as the database analysis names tables. A
model the project defines without a key is listed with none: only then is "no unique key" known.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from idemlint.analysis.syntax import parsed_if
from idemlint.knowledge.orms import PARTIAL_INDEX_ARGUMENT, SQLALCHEMY_VERSION_ARGUMENT, VERSION_FIELDS

UniqueKeys = dict[str, tuple[frozenset[str], ...]]  # model -> the column sets kept unique
Versioned = dict[str, bool]  # model -> whether its ORM writes compare a version column (optimistic locking)

# the bytes a file must hold to define a model (a field or column) before its AST is read
KEY_MENTIONS = re.compile(rb"unique|primary_key|Field\(|Column\(|mapped_column\(|ForeignKey\(")
_IS_NULL = re.compile(r"^\s*\w+\s+IS\s+NULL\s*$", re.IGNORECASE)
FIELD_CALL = re.compile(r"(Field|Column|column|ForeignKey|relationship)$")


def declared_keys(source: bytes | str, tree: ast.Module | None = None) -> tuple[UniqueKeys, Versioned]:
    """The unique keys of each model class one file defines (a class with a field or column),
    none for a model that declares none, and whether each compares a version column; ({}, {})
    for most files."""
    tree = tree or parsed_if(source, KEY_MENTIONS)
    if tree is None:
        return {}, {}
    found: UniqueKeys = {}
    versioned: Versioned = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and defines_fields(node):
            found[node.name.lower()] = tuple(sorted(set(_class_keys(node)), key=sorted))
            versioned[node.name.lower()] = versioned.get(node.name.lower(), True) and _has_version_column(node)
    return found, versioned


def join_unique_keys(parts: Iterable[Mapping[str, tuple[frozenset[str], ...]]]) -> UniqueKeys:
    """One project's keys from its files' (two classes of one name: either's keys count)."""
    joined: dict[str, set[frozenset[str]]] = {}
    for part in parts:
        for model, keys in part.items():
            joined.setdefault(model, set()).update(keys)
    return {model: tuple(sorted(keys, key=sorted)) for model, keys in sorted(joined.items())}


def versioned_models(parts: Iterable[Mapping[str, bool]]) -> frozenset[str]:
    """The models whose every class, in every file, compares a version column."""
    joined: dict[str, bool] = {}
    for part in parts:
        for model, versioned in part.items():
            joined[model] = joined.get(model, True) and versioned
    return frozenset(model for model, versioned in joined.items() if versioned)


def kept_unique(keys: Iterable[frozenset[str]], columns: Iterable[str]) -> bool:
    """Whether a query on `columns` names every column of one unique key (a foreign key
    matches as `user` or `user_id`), or the primary key (`pk`, `id`)."""
    named = {_plain(c) for c in columns}
    if named & {"pk", "id"}:
        return True  # the primary key, declared or not
    return any(key and {_plain(c) for c in key} <= named for key in keys)


def _plain(column: str) -> str:
    column = column.lower().split("__", 1)[0]
    return column[:-3] if column.endswith("_id") else column


def defines_fields(cls: ast.ClassDef) -> bool:
    """A model class: it declares a field or column (`models.CharField(...)`, `Column(...)`)."""
    for statement in cls.body:
        value = statement.value if isinstance(statement, (ast.Assign, ast.AnnAssign)) else None
        if isinstance(value, ast.Call):
            callee = callee_name(value)
            if FIELD_CALL.search(callee):
                return True
    return False


def _class_keys(cls: ast.ClassDef) -> Iterable[frozenset[str]]:
    for statement in cls.body:
        if isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            value = statement.value
            if value is None:
                continue
            if names and names[0] == "__table_args__":
                yield from _constraints(value)
            elif names and names[0] in ("unique_together",):
                yield from _unique_together(value)
            elif names and names[0] == "constraints":
                yield from _constraints(value)
            elif names and isinstance(value, ast.Call) and _declares_unique(value):
                yield frozenset({names[0]})
        elif isinstance(statement, ast.ClassDef) and statement.name == "Meta":
            yield from _class_keys(statement)


def _has_version_column(cls: ast.ClassDef) -> bool:
    """`__mapper_args__ = {"version_id_col": version_id}`, or a field `version = IntegerVersionField()`."""
    for statement in cls.body:
        if not isinstance(statement, (ast.Assign, ast.AnnAssign)) or statement.value is None:
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        value = statement.value
        if names == ["__mapper_args__"] and isinstance(value, ast.Dict):
            if any(
                isinstance(key, ast.Constant) and key.value == SQLALCHEMY_VERSION_ARGUMENT and _column_name(column)
                for key, column in zip(value.keys, value.values, strict=True)
            ):
                return True
        elif names and isinstance(value, ast.Call):
            callee = callee_name(value)
            if callee in VERSION_FIELDS:
                return True
    return False


def _declares_unique(call: ast.Call) -> bool:
    callee = callee_name(call)
    if callee == "OneToOneField":
        return True
    return any(k.arg in ("unique", "primary_key") and _is_true(k.value) for k in call.keywords)


def _unique_together(value: ast.expr) -> Iterable[frozenset[str]]:
    if not isinstance(value, (ast.Tuple, ast.List)):
        return
    strings = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if strings and len(strings) == len(value.elts):
        yield frozenset(strings)  # `unique_together = ("a", "b")`
        return
    for element in value.elts:
        yield from _unique_together(element)


def _constraints(value: ast.expr) -> Iterable[frozenset[str]]:
    elements = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [value]
    for element in elements:
        if not isinstance(element, ast.Call):
            continue
        callee = callee_name(element)
        unique_index = callee == "Index" and any(k.arg == "unique" and _is_true(k.value) for k in element.keywords)
        if callee != "UniqueConstraint" and not unique_index:
            continue
        # SQLAlchemy's `Index(name, *columns)`: the first argument names the index
        columns = [_column_name(a) for a in (element.args[1:] if unique_index else element.args)]
        for keyword in element.keywords:
            if keyword.arg == "fields" and isinstance(keyword.value, (ast.List, ast.Tuple)):
                columns += [_column_name(e) for e in keyword.value.elts]
        if not columns or not all(columns):
            continue  # an expression (`func.lower(email)`) is no plain column
        key = frozenset(c for c in columns if c)
        if any(
            k.arg and PARTIAL_INDEX_ARGUMENT.match(k.arg) and not _new_rows_meet(k.value, key) for k in element.keywords
        ):
            continue  # unique only among the rows a condition picks, which a new row may not be
        yield key


def _new_rows_meet(condition: ast.expr, key: frozenset[str]) -> bool:
    """A condition every new row of the key meets: columns unset, as soft deletion keeps its
    live rows (`Q(deleted_at__isnull=True)`, `Q(deleted=None)`, `deleted_at.is_(None)`,
    `"deleted_at IS NULL"`), or the key's own columns set (`Q(bugzilla_id__isnull=False)`: a
    null key clashes with nothing anyway)."""
    if isinstance(condition, ast.Constant) and isinstance(condition.value, str):
        return bool(_IS_NULL.match(condition.value))
    if isinstance(condition, ast.Compare):
        return all(isinstance(op, (ast.Eq, ast.Is)) for op in condition.ops) and all(
            _is_none(c) for c in condition.comparators
        )
    if isinstance(condition, ast.BinOp) and isinstance(condition.op, ast.BitAnd):
        return _new_rows_meet(condition.left, key) and _new_rows_meet(condition.right, key)
    if isinstance(condition, ast.UnaryOp) and isinstance(condition.op, ast.Invert):
        return _blank_key(condition.operand, key)  # `~Q(email=None)`: a null key clashes with nothing anyway
    if not isinstance(condition, ast.Call):
        return False
    callee = callee_name(condition)
    if callee == "is_":
        return len(condition.args) == 1 and _is_none(condition.args[0])
    if callee in ("and_", "text"):
        return bool(condition.args) and all(_new_rows_meet(a, key) for a in condition.args)
    return (
        callee == "Q"
        and not condition.args
        and all(k.arg is not None and _unset_or_key_set(k.arg, k.value, key) for k in condition.keywords)
    )


def _blank_key(condition: ast.expr, key: frozenset[str]) -> bool:
    """`Q(email=None)` for a column of the key (not `Q(email="")`: two blank keys racing are
    both inserted where the constraint leaves blanks out)."""
    return (
        isinstance(condition, ast.Call)
        and callee_name(condition) == "Q"
        and not condition.args
        and bool(condition.keywords)
        and all(
            k.arg in key and isinstance(k.value, ast.Constant) and k.value.value is None for k in condition.keywords
        )
    )


def _unset_or_key_set(lookup: str, value: ast.expr, key: frozenset[str]) -> bool:
    """`x__isnull=True` / `x=None` (unset), or `k__isnull=False` for a column of the key."""
    column, _, test = lookup.partition("__")
    if test == "isnull" and isinstance(value, ast.Constant) and isinstance(value.value, bool):
        return value.value or column in key
    return not test and _is_none(value)


def _is_none(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is None


# expressions a key may hold a column by whose equal values stay equal: `Lower("email")` clashes
# wherever `email` does (and, case-folded, more often)
_SAME_VALUE_SAME_KEY = frozenset({"Lower", "Upper", "lower", "upper", "F", "Trim", "trim"})


def _column_name(expr: ast.expr) -> str | None:
    """`"a"`, `Model.a`, or `a` (the column defined above it in the class body), also inside
    `Lower(...)` and the like: its name."""
    if isinstance(expr, ast.Call) and callee_name(expr) in _SAME_VALUE_SAME_KEY and len(expr.args) == 1:
        return _column_name(expr.args[0])
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def callee_name(call: ast.Call) -> str:
    """The last name of what is called: `Index` in `sa.Index(...)` and in `Index(...)`."""
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def _is_true(expr: ast.expr) -> bool:
    return isinstance(expr, ast.Constant) and expr.value is True
