"""Import libcst only when a file is really analysed.

Rule and analysis modules are imported by `idemlint rules`, `explain` and the pre-filter,
none of which needs libcst (0.2-0.3 s of start-up, paid on every pre-commit run). The
proxy imports the module on first use and then puts the real module in the importing
module's globals, so every later access is an ordinary global lookup.
"""

from __future__ import annotations

import importlib
from typing import Any


class LazyModule:
    def __init__(self, name: str, namespace: dict[str, Any], alias: str) -> None:
        self._name = name
        self._namespace = namespace
        self._alias = alias

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        self._namespace[self._alias] = module
        return getattr(module, attr)
