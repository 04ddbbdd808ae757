"""Import libcst only when a file is really analysed.

Rule modules are imported by `idemlint rules`, `explain` and the pre-filter, none of
which needs libcst (0.2-0.3 s of start-up, paid on every pre-commit run).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    def __init__(self, name: str) -> None:
        self._name = name
        self._module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)
