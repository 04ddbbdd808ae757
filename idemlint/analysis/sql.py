"""SQL text in Python code: recover it from the expression, classify it with sqlglot.

The text is rebuilt from string literals, f-strings, `%`/`.format`, concatenation,
`text(...)` and variables assigned in the same function; holes become `__hole__` and
driver placeholders (`%s`, `%(name)s`, `$1`) become ones sqlglot reads. sqlglot is
imported only when a file has SQL to classify, and SQL it cannot parse is "unknown":
never a guess, never a crash.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, string_value

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

_SQL_START = re.compile(r"^\s*(update|select|insert|delete|with)\b", re.IGNORECASE)
_PYFORMAT = re.compile(r"%\((\w+)\)s")
_FORMAT_HOLE = re.compile(r"\{[^{}]*\}")


@dataclass(frozen=True)
class Predicate:
    column: str
    op: str  # eq, in, lt, gt, is, other
    value: str  # literal, param, column, expr


@dataclass(frozen=True)
class SqlStatement:
    kind: str  # update, select, insert, delete, other
    table: str | None
    sets: tuple[tuple[str, str, str], ...] = ()  # (column, value kind, literal text)
    where: tuple[Predicate, ...] = ()
    locks: bool = False
    returning: bool = False
    columns: tuple[str, ...] = field(default=())


# how many names, joins and calls the text of a statement is followed through
_DEEPEST = 6


# a driver's statement object built from its text: `SimpleStatement("SELECT ...")`, `BoundQuery(...)`
_STATEMENT_CLASS = re.compile(r"^[A-Z]\w*(Statement|Query)$")


def sql_text(model: ModuleModel, expr: cst.BaseExpression | None, depth: int = 0) -> str | None:
    """The SQL an expression evaluates to, with holes, or None when it is not SQL text."""
    if expr is None or depth > _DEEPEST:
        return None
    text = _text(model, expr, depth)
    if text is None or not _SQL_START.match(text):
        return None
    return text


def _text(model: ModuleModel, expr: cst.BaseExpression, depth: int) -> str | None:
    if depth > _DEEPEST:
        return None  # `args = env + args`: a name built from itself is followed a bounded way (the
        # parts of one expression, `"UPDATE t " "SET ..."` however many lines, count once)
    value = string_value(expr)
    if value is not None:
        return value
    if isinstance(expr, cst.FormattedString):
        parts = []
        for part in expr.parts:
            parts.append(part.value if isinstance(part, cst.FormattedStringText) else "__hole__")
        return "".join(parts)
    if isinstance(expr, cst.ConcatenatedString):
        left, right = _text(model, expr.left, depth), _text(model, expr.right, depth)
        return None if left is None or right is None else left + right
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Modulo):
            return _text(model, expr.left, depth)
        if isinstance(expr.operator, cst.Add):
            left, right = _text(model, expr.left, depth), _text(model, expr.right, depth)
            if left is None and right is None:
                return None
            return (left or "__hole__") + (right or " __hole__ ")
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "format":
            base = _text(model, expr.func.value, depth + 1)
            return _FORMAT_HOLE.sub("__hole__", base) if base is not None else None
        name = model.call_name(expr) or ""
        last = name.rsplit(".", 1)[-1]
        if (name.endswith("text") or _STATEMENT_CLASS.match(last)) and expr.args:
            return _text(model, expr.args[0].value, depth + 1)  # `sqlalchemy.text("...")`, `SimpleStatement("...")`
    if isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value in ("self", "cls"):
        owner = model.enclosing_class(expr)  # `self._SELECT_SESSIONS`: a constant the class body binds
        for line in owner.body.body if owner is not None else ():
            for small in line.body if isinstance(line, cst.SimpleStatementLine) else ():
                if isinstance(small, cst.Assign) and any(
                    isinstance(t.target, cst.Name) and t.target.value == expr.attr.value for t in small.targets
                ):
                    return _text(model, small.value, depth + 1)
    if isinstance(expr, cst.Name):
        scope = model.scope_of(expr)
        bindings = model.resolve(scope, expr.value)
        for binding in bindings:
            if binding.kind in ("assign", "augassign") and binding.value is not None:
                found = _text(model, binding.value, depth + 1)
                if found is not None:
                    return found
    return None


def classify(text: str) -> SqlStatement | None:
    return _classify(_normalise(text))


def _normalise(text: str) -> str:
    text = _PYFORMAT.sub(r":\1", text)
    return text.replace("%s", "?").replace("%%", "%")


@lru_cache(maxsize=1)
def _quiet_sqlglot() -> None:
    """sqlglot logs warnings about the SQL it reads (`Locking reads using 'FOR UPDATE/SHARE' are
    not supported`) to stderr: text from the linted code that idemlint did not write. Its
    judgement of the SQL is read from the tree, so its log is kept out of the output."""
    import logging

    logger = logging.getLogger("sqlglot")
    logger.addHandler(logging.NullHandler())
    logger.propagate = False
    logger.setLevel(logging.CRITICAL)


@lru_cache(maxsize=2048)
def _classify(text: str) -> SqlStatement | None:
    try:
        import sqlglot
        from sqlglot import exp
    except ImportError:  # pragma: no cover - sqlglot is a dependency
        return None
    _quiet_sqlglot()
    try:
        tree = sqlglot.parse_one(text, read="postgres")
    except Exception:
        try:
            tree = sqlglot.parse_one(text)
        except Exception:
            return None
    if isinstance(tree, exp.Update):
        table = tree.this.name if isinstance(tree.this, exp.Table) else None
        sets = []
        for assignment in tree.expressions:
            if isinstance(assignment, exp.EQ) and isinstance(assignment.this, exp.Column):
                sets.append((assignment.this.name.lower(), *_value_kind(assignment.expression)))
        return SqlStatement(
            "update",
            _table(table),
            tuple(sets),
            _predicates(tree.args.get("where")),
            False,
            bool(tree.args.get("returning")),
        )
    if isinstance(tree, exp.Select):
        tables = [t.name for t in tree.find_all(exp.Table)]
        columns = tuple(c.alias_or_name.lower() for c in tree.expressions)
        return SqlStatement(
            "select",
            _table(tables[0]) if tables else None,
            (),
            _predicates(tree.args.get("where")),
            bool(tree.args.get("locks")),
            False,
            columns,
        )
    if isinstance(tree, exp.Insert):
        inserted = tree.find(exp.Table)
        return SqlStatement("insert", _table(inserted.name if inserted else None))
    if isinstance(tree, exp.Delete):
        deleted = tree.find(exp.Table)
        return SqlStatement(
            "delete", _table(deleted.name if deleted else None), (), _predicates(tree.args.get("where"))
        )
    return SqlStatement("other", None)


@lru_cache(maxsize=512)
def only_reads(text: str) -> bool:
    """The statement selects rows from a table and changes nothing: not a `SELECT` with no
    `FROM` (`SELECT capture_payment(%s)` runs a function, `SELECT nextval(...)` moves a
    sequence), nor one that locks, stores `INTO` a table, or holds a write in a `WITH`."""
    try:
        import sqlglot
        from sqlglot import exp
    except ImportError:  # pragma: no cover - sqlglot is a dependency
        return False
    _quiet_sqlglot()
    try:
        tree = sqlglot.parse_one(_normalise(text), read="postgres")
    except Exception:
        return False
    return (
        isinstance(tree, exp.Select)
        and (tree.args.get("from_") or tree.args.get("from")) is not None  # the key's name varies by version
        and not tree.args.get("locks")
        and not tree.args.get("into")
        and not any(tree.find_all(exp.Update, exp.Insert, exp.Delete, exp.Merge))
    )


def _table(name: str | None) -> str | None:
    if not name or name == "__hole__":
        return None
    return name.lower()


def _value_kind(node: object) -> tuple[str, str]:
    from sqlglot import exp

    if isinstance(node, exp.Boolean):
        return "bool", node.sql()
    if isinstance(node, exp.Literal):
        return "literal", str(node.this)
    if isinstance(node, (exp.Placeholder, exp.Parameter)):
        return "param", ""
    if isinstance(node, exp.Column):
        return ("param", "") if node.name == "__hole__" else ("column", node.name)
    if isinstance(node, exp.Null):
        return "null", "NULL"
    return "expr", node.sql() if isinstance(node, exp.Expression) else ""


_OPS = {"EQ": "eq", "In": "in", "Is": "is", "LT": "lt", "LTE": "lt", "GT": "gt", "GTE": "gt", "NEQ": "ne"}


def _predicates(where: object) -> tuple[Predicate, ...]:
    """The comparisons the WHERE makes on the statement's own rows: not those of a subquery
    (`EXISTS (SELECT 1 FROM op2 WHERE op2.status = 'proposed')` tests other rows), nor a test
    inside a value it computes (`x IS DISTINCT FROM CASE WHEN status IN (...) THEN 0 END`)."""
    from sqlglot import exp

    if not isinstance(where, exp.Expression):
        return ()
    found = []
    for column in where.find_all(exp.Column):
        parent = column.parent
        if column.name == "__hole__" or parent is None or _in_an_inner_scope(column, where):
            continue
        op = _OPS.get(type(parent).__name__, "other")
        other = parent.args.get("expression") if parent.args.get("this") is column else parent.args.get("this")
        if op == "in":
            kinds = {_value_kind(v)[0] for v in parent.expressions}
            value = "literal" if kinds and kinds <= {"literal", "bool", "null"} else "param"
        elif other is not None:
            value = _value_kind(other)[0]
        else:
            value = "expr"
        found.append(Predicate(column.name.lower(), op, value))
    return tuple(found)


def _in_an_inner_scope(column: object, where: object) -> bool:
    """The column is read where it tests other rows than the statement's: in an `EXISTS`
    subquery, or a subquery over another table (a subquery over the same table that picks the
    row, `id = (SELECT id FROM jobs WHERE status = 'queued' ... LIMIT 1)`, tests the row itself);
    or in a value compared with a column (`x IS DISTINCT FROM CASE WHEN status IN (...) THEN 0
    END`; a `CASE` that is itself the condition, or compared with a literal, still tests the row)."""
    from sqlglot import exp

    node = getattr(column, "parent", None)
    while node is not None and node is not where:
        if isinstance(node, exp.Exists):
            return True
        if isinstance(node, exp.Select) and not _picks_the_row_itself(node, where):
            return True
        if isinstance(node, (exp.Case, exp.If)):
            around: object = node.parent
            inner: object = node
            while isinstance(around, exp.Paren):
                around, inner = around.parent, around
            if isinstance(around, exp.Binary) and not isinstance(around, exp.Connector):
                other = around.expression if around.this is inner else around.this
                if isinstance(other, exp.Column):
                    return True  # compared with a column: a value it computes (`= 1` still tests the row)
        node = node.parent
    return False


def _picks_the_row_itself(select: object, where: object) -> bool:
    """The subquery reads the statement's own table and gives the key the statement's row is
    compared with (`id = (SELECT id FROM jobs WHERE ...)`, `id IN (SELECT id ...)`): what it
    tests, the row itself meets. One giving another column (`owner_id IN (SELECT reference ...)`)
    picks other rows."""
    from sqlglot import exp

    statement = getattr(where, "parent", None)
    target = statement.this if isinstance(statement, (exp.Update, exp.Delete)) else None
    if isinstance(statement, exp.Select):
        target = statement.find(exp.Table)
    if not isinstance(target, exp.Table) or not isinstance(select, exp.Select):
        return False
    source = select.args.get("from_") or select.args.get("from")  # its name in sqlglot's releases
    if source is None or not any(t.name.lower() == target.name.lower() for t in source.find_all(exp.Table)):
        return False
    around = select.parent
    while isinstance(around, (exp.Subquery, exp.Paren)):
        around = around.parent
    compared = around.this if isinstance(around, (exp.EQ, exp.In)) else None
    given = [e.alias_or_name.lower() for e in select.expressions]
    return (
        isinstance(compared, exp.Column)
        and compared.name.lower() in ("id", "pk", "uuid")
        and given == [compared.name.lower()]
    )
