"""The syntax tree itself: a node's children without trivia, walks in source order, and the
values of plain literals and call arguments. Below the module model: no facts of a file."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def conjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The parts of an `and` (`a and b and c`), or the test itself."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And):
        return [*conjuncts(test.left), *conjuncts(test.right)]
    return [test]


def disjuncts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The parts of an `or` (`a or b or c`), or the test itself."""
    if isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.Or):
        return [*disjuncts(test.left), *disjuncts(test.right)]
    return [test]


def string_value(expr: cst.BaseExpression | None) -> str | None:
    """The value of a plain string literal (implicitly concatenated parts too), or None."""
    parts: list[str] = []
    pending = [expr]
    while pending:  # iterative: generated files concatenate thousands of literals
        node = pending.pop()
        if isinstance(node, cst.ConcatenatedString):
            pending.extend((node.right, node.left))
        elif isinstance(node, cst.SimpleString):
            try:
                value = node.evaluated_value
            except (RecursionError, ValueError, SyntaxError, MemoryError):
                return None
            if not isinstance(value, str):
                return None
            parts.append(value)
        else:
            return None
    return "".join(parts)


def keyword(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def positional(call: cst.Call, index: int) -> cst.Arg | None:
    plain = [a for a in call.args if a.keyword is None and not a.star]
    return plain[index] if index < len(plain) else None


def caught_classes(caught: cst.BaseExpression | None) -> list[cst.BaseExpression]:
    """The classes an `except` clause names: one, or a tuple or list of them (a name bound to one
    is followed by `policy.common.caught_expression`, not here); none for a bare `except:`."""
    if caught is None:
        return []
    return [e.value for e in caught.elements] if isinstance(caught, (cst.Tuple, cst.List)) else [caught]


def excluded_values(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What `x != A` or `x not in (A, B)` holds `x` apart from (`[A]`, `[A, B]`); empty for any
    other test: a handler's `if e.status != 429: raise` leaves for every answer but these."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return []
    target = test.comparisons[0]
    if isinstance(target.operator, cst.NotEqual):
        return [target.comparator]
    if isinstance(target.operator, cst.NotIn) and isinstance(target.comparator, (cst.Tuple, cst.List, cst.Set)):
        return [element.value for element in target.comparator.elements]
    return []


def children_of(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """A node's children in field order, whitespace and punctuation skipped. Code that holds
    the file's model should ask `model.children_of`: the same answer from the walk's record."""
    load_syntax_types()
    return syntax_children(node)


# Per node type, never per file: the same for every tree, so they can live at module level.
_FIELDS: dict[type, tuple[str, ...]] = {}
_SYNTAX_TYPES: set[type] = set()
# Whitespace and punctuation: a third of a tree's nodes, and no rule asks about them.
_TRIVIA = (
    "SimpleWhitespace ParenthesizedWhitespace TrailingWhitespace EmptyLine Newline Comment Comma Dot Colon "
    "Semicolon LeftParen RightParen LeftSquareBracket RightSquareBracket LeftCurlyBrace RightCurlyBrace AssignEqual"
).split()


def syntax_children(node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
    """A node's children read straight from its dataclass fields, skipping trivia: an
    order of magnitude cheaper than `node.children`, which re-visits every field."""
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(f.name for f in dataclasses.fields(node))
    wanted = _SYNTAX_TYPES
    found: list[cst.CSTNode] = []
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        if kind in wanted:
            found.append(value)
        elif kind is tuple or kind is list:
            found.extend(item for item in value if type(item) in wanted)
    return tuple(found)


def load_syntax_types() -> None:
    if _SYNTAX_TYPES:
        return
    pending = [cst.CSTNode]
    while pending:
        for sub in pending.pop().__subclasses__():
            pending.append(sub)
            _SYNTAX_TYPES.add(sub)
    _SYNTAX_TYPES.difference_update(getattr(cst, name) for name in _TRIVIA)


def iter_nodes(root: cst.CSTNode, stop_at_functions: bool = True) -> Iterator[cst.CSTNode]:
    """Every node below `root` in source order, not descending into nested functions,
    classes or lambdas unless asked to. Code that holds the file's model should ask
    `model.iter_nodes`: the same nodes, with each node's children looked up, not computed."""
    load_syntax_types()
    return walk_nodes(root, stop_at_functions, {})


def walk_nodes(
    root: cst.CSTNode, stop_at_functions: bool, children: dict[cst.CSTNode, tuple[cst.CSTNode, ...]]
) -> Iterator[cst.CSTNode]:
    found = children.get(root)
    stack = list(reversed(found if found is not None else syntax_children(root)))
    scopes = (cst.FunctionDef, cst.ClassDef, cst.Lambda) if stop_at_functions else ()
    while stack:
        node = stack.pop()
        yield node
        if type(node) in scopes:
            continue
        found = children.get(node)
        stack.extend(reversed(found if found is not None else syntax_children(node)))


# Python 3.14's `except A, B:` (PEP 758), which an older interpreter's parser refuses: the same
# handler, parenthesised, on the same line
_BARE_EXCEPT_TUPLE = re.compile(rb"^([ \t]*except[ \t]+)(?![ \t(*])([^\n:#()]*)(:)", re.MULTILINE)


def stdlib_tree(source: bytes | str, filename: str = "<unknown>") -> ast.Module:
    """The standard library's tree of a file, also of one using Python 3.14's unparenthesised
    handler of several plain classes (`except A, B:`, read as `except (A, B):`), which libcst
    reads and an older interpreter's `ast` refuses. Other newer syntax is not read. Raises what
    `ast.parse` raises where that does not help."""
    try:
        return ast.parse(source, filename)
    except SyntaxError:
        raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
        if b"except" not in raw:
            raise
        count = 0

        def parenthesise(match: re.Match[bytes]) -> bytes:
            nonlocal count
            if b"," not in match.group(2):
                return match.group()
            count += 1
            return match.group(1) + b"(" + match.group(2).rstrip() + b")" + match.group(3)

        fixed = _BARE_EXCEPT_TUPLE.sub(parenthesise, raw)
        if not count:
            raise
        return ast.parse(fixed, filename)


def parsed_if(source: bytes | str, mentions: re.Pattern[bytes]) -> ast.Module | None:
    """The standard library's tree of a file whose bytes match `mentions` (a cheap test first:
    most files name no model or manager), or None, also for a file that does not parse."""
    raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    if not mentions.search(raw):
        return None
    try:
        return stdlib_tree(raw)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def own_nodes(function: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[ast.AST]:
    """The nodes of a function's own body, not of functions or classes defined in it."""
    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            pending.extend(ast.iter_child_nodes(node))


def parameter_names(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> tuple[str, ...]:
    """The names a function's parameters bind, positional first, then keyword-only (not
    `*args`/`**kwargs`)."""
    args = function.args
    return tuple(a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs))
