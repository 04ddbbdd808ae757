"""What a module's imports say about the code in it."""

from __future__ import annotations

# test support: factory_boy's model factories and pytest's fixtures build rows for tests,
# wherever the file sits (`app/factories.py`, `core/factory.py`)
TEST_SUPPORT_IMPORTS = frozenset({"factory", "factory_boy", "pytest"})
