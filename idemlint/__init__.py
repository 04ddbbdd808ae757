"""idemlint: find the bugs that make retried requests do things twice.

Kept import-light on purpose: a pre-commit hook pays this module's import time on
every commit, so nothing here pulls in libcst.
"""

from __future__ import annotations

__version__ = "0.1.0"
DOCS_URL = "https://github.com/idemlint/idemlint/blob/main/docs/rules.md"

__all__ = ["DOCS_URL", "__version__"]
