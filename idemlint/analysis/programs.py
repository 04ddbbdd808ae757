"""Where a file's code runs, as its code says: a program a person runs (a `__main__` block, a
loop at module level), a service that runs until it is stopped, or test support. Its path says
the rest (`paths.role_of`); `file_role` joins the two, for every reader of a file's role."""

from __future__ import annotations

from pathlib import PurePath
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import called_name, string_value
from idemlint.knowledge.roles import SERVES_FOREVER, TEST_FACTORY_BASES, TEST_SUPPORT_IMPORTS

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def file_role(model: ModuleModel, path: str) -> str:
    """The file's role (`paths.ROLES`): its path's, unless the code says it is a program run by
    hand or test support; a package's `__main__.py` that runs until stopped (`python -m bot`,
    `loop.run_forever()`) is a service, not a script."""
    from idemlint.paths import role_of

    path_role = role_of(path)
    if path_role == "script" and PurePath(path).name == "__main__.py" and serves_forever(model):
        return "source"
    if path_role != "source":
        return path_role
    if runs_as_program(model):
        return "script"
    return "test" if supports_tests(model) else path_role


def runs_as_program(model: ModuleModel) -> bool:
    """Whether the file is a program run by hand rather than a module imported by the
    product: it has an `if __name__ == "__main__":` block, or loops at module level (a
    wait-for-the-database script), and does not run until stopped. Its findings are a
    script's, whatever its path."""
    if serves_forever(model):
        return False
    for statement in model.module.body:
        if isinstance(statement, cst.While):
            return True
        if isinstance(statement, cst.If) and _tests_main_name(statement.test):
            return True
    return False


def serves_forever(model: ModuleModel) -> bool:
    """Whether the program runs until it is stopped (`loop.run_forever()`, a server's
    `serve_forever()`): a service, a daemon or a bot, not a run someone watches to its end."""
    return any(called_name(call) in SERVES_FOREVER for call in model.calls)


def supports_tests(model: ModuleModel) -> bool:
    """Whether the module is test support by what it imports at its top and defines:
    pytest's fixtures, or factory_boy's model factories (a class built on one of its
    factory classes; a project module of the same name, Flask's `factory.py`, is not it). A
    function's own `import pytest` (a `test` command that runs the suite) says nothing."""
    imported: set[str] = set()
    for statement in model.module.body:
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Import):
                imported.update((model.dotted(alias.name) or "").split(".", 1)[0] for alias in small.names)
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                imported.add((model.dotted(small.module) or "").split(".", 1)[0])
    if imported & TEST_SUPPORT_IMPORTS:
        return True
    bases = (model.qualname(base.value) or "" for node in model.classes for base in node.bases)
    return any(b in TEST_FACTORY_BASES for b in bases)


def _tests_main_name(test: cst.BaseExpression) -> bool:
    """`__name__ == "__main__"`, either way round."""
    if not isinstance(test, cst.Comparison) or len(test.comparisons) != 1:
        return False
    sides = (test.left, test.comparisons[0].comparator)
    names = [side.value for side in sides if isinstance(side, cst.Name)]
    strings = [string_value(side) for side in sides if isinstance(side, cst.SimpleString)]
    return names == ["__name__"] and strings == ["__main__"]
