"""Names imported on first use (PEP 562), as generated clients do: the guarded imports say
where each one comes from."""

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .retries import Retries, retry

_dynamic_imports = {"Retries": ".retries", "retry": ".retries"}


def __getattr__(name):
    module = import_module(_dynamic_imports[name], __package__)
    return getattr(module, name)
