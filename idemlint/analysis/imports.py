"""The names a module binds to other modules and their members, as the model's walk meets
them: import statements, and a late `import_module("...")` bound to a name (a data-access
module imported inside a function to break an import cycle)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.syntax import string_value

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def record_import(model: ModuleModel, node: cst.Import) -> None:
    """`import a.b` binds `a`; `import a.b as c` binds `c` to `a.b`."""
    for alias in node.names:
        dotted = model.dotted(alias.name) or ""
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            model.imports[alias.asname.name.value] = dotted
        else:
            head = dotted.split(".")[0]
            model.imports[head] = head


def record_import_from(model: ModuleModel, node: cst.ImportFrom) -> None:
    """`from .a import b as c` binds `c` to `.a.b`."""
    if node.module is None or isinstance(node.names, cst.ImportStar):
        return
    base = model.dotted(node.module) or ""
    if node.relative:
        base = "." * len(node.relative) + base
    for alias in node.names:
        name = model.dotted(alias.name) or ""
        local = name
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            local = alias.asname.name.value
        model.imports[local] = f"{base}.{name}"


def late_import_target(model: ModuleModel, value: cst.BaseExpression | None) -> str | None:
    """The module `import_module("app.crud.orders")` names (absolute only), or None."""
    if not (isinstance(value, cst.Call) and len(value.args) == 1 and value.args[0].keyword is None):
        return None
    target = string_value(value.args[0].value)
    if model.qualname(value.func) != "importlib.import_module" or not target or target.startswith("."):
        return None
    return target


def record_late_import(model: ModuleModel, late: dict[str, str | None], name: str, value: cst.BaseExpression) -> None:
    """`crud = import_module("app.crud.orders")` names the module as `import app.crud.orders as
    crud` would. `late` holds the module each name was bound to so far (None: two modules,
    which names neither); an import statement of the name wins."""
    target = late_import_target(model, value)
    if target is None:
        return
    if name in model.imports and name not in late:
        return
    if late.setdefault(name, target) == target:
        model.imports[name] = target
    else:
        late[name] = None
        model.imports.pop(name, None)
