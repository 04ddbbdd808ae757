"""The names a module is known by beyond its path: a package nested in a plain folder, the
modules it imports under another name, the names a package's `__init__.py` re-exports. Read
from the source alone (a regular expression, or a parse of `__init__.py` files only)."""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping

from idemlint.analysis.syntax import stdlib_tree


def nested_package_names(modules: Mapping[str, bool]) -> dict[str, str]:
    """The names modules of a package nested in a plain folder are imported by: in a repository
    holding several projects (`st2common/st2common/exceptions/workflow.py`, where the outer
    `st2common/` has no `__init__.py`), Python finds the package from its own top, so the module
    is `st2common.exceptions.workflow`. Each such name maps to the name from the path, unless a
    module of the project is named so itself. Modules are {name from the path: is a package}."""
    packages = {name for name, package in modules.items() if package}
    found: dict[str, str] = {}
    clashing: set[str] = set()  # two projects' `common.errors`: which one an import means is unknown
    for name in modules:
        parts = name.split(".")
        folder = top = len(parts) - (0 if name in packages else 1)  # the folder holding the file
        while top > 0 and ".".join(parts[:top]) in packages:
            top -= 1
        if 0 < top < folder:  # in a package, itself in a plain folder
            imported = ".".join(parts[top:])
            if imported in found:
                clashing.add(imported)
            elif imported not in modules and not name.startswith(imported + "."):
                found[imported] = name  # (`st2common` -> `st2common.st2common` would rename its own result)
    return {imported: name for imported, name in found.items() if imported not in clashing}


# `import trio as event_loop`, at the top of a module or one level into a module-level
# `try:`/`except`/`else:`/`if` (not inside a function or a class)
_MODULE_ALIAS = re.compile(rb"^(    )?import ([A-Za-z_][\w.]*) as ([A-Za-z_]\w*)[ \t]*(?:#[^\n]*)?\r?$")
_GUARD_LINE = re.compile(rb"^(?:try|except|else|if|elif)\b")


def module_aliases(source: bytes, path: str, source_roots: tuple[str, ...] = ("src",)) -> dict[str, str]:
    """`import trio as event_loop` in `pkg/compat.py`: {`pkg.compat.event_loop`: `trio`}, so
    `compat.event_loop.sleep()` elsewhere is `trio.sleep()`. The first import of a name wins
    (`try: import trio as event_loop` / `except ImportError: import asyncio as event_loop`)."""
    from idemlint.analysis.calls import module_name

    if b" as " not in source:
        return {}
    module = module_name(path, source_roots)
    found: dict[str, str] = {}
    opener = b""  # the last line at the left margin: what an indented import sits in
    for line in source.splitlines():
        if line[:1] not in (b" ", b"\t", b"#", b"") and line.strip():
            opener = line
        match = _MODULE_ALIAS.match(line)
        if match is None or match.group(1) and not _GUARD_LINE.match(opener):
            continue
        found.setdefault(f"{module}.{match.group(3).decode()}", match.group(2).decode())
    return found


def package_reexports(source: bytes, path: str, source_roots: tuple[str, ...] = ("src",)) -> dict[str, str]:
    """`from .client import ApiClient` (or `from shop.payments.client import ApiClient as
    Client`) in `shop/payments/__init__.py`: {`shop.payments.ApiClient`: ...}. Other files
    re-export nothing callers import through them."""
    from idemlint.analysis.calls import absolute, module_name

    if not path.endswith("__init__.py") or b"import" not in source:
        return {}
    try:
        tree = stdlib_tree(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    package = module_name(path, source_roots)
    found: dict[str, str] = {}
    for statement in _runtime_imports(tree):
        if isinstance(statement, ast.ImportFrom):
            origin = absolute("." * statement.level + (statement.module or ""), package, is_package=True)
            for alias in statement.names:
                name = alias.asname or alias.name
                if alias.name == "*" or not origin or origin == f"{package}.{name}":
                    continue  # `from .client import client`: `pkg.client` still names the submodule
                found[f"{package}.{name}"] = f"{origin}.{alias.name}"
    return found


def _runtime_imports(tree: ast.Module) -> list[ast.stmt]:
    """The package's top-level statements, and the imports under `if TYPE_CHECKING:` when a
    module-level `__getattr__` imports names on first use (PEP 562, as generated SDKs do: the
    guarded import says where each lazily imported name comes from)."""
    lazy = any(isinstance(s, ast.FunctionDef) and s.name == "__getattr__" for s in tree.body)
    found: list[ast.stmt] = []
    for statement in tree.body:
        found.append(statement)
        if lazy and isinstance(statement, ast.If) and _names_type_checking(statement.test):
            found.extend(statement.body)
    return found


def _names_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )
