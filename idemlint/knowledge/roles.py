"""What a module's imports say about the code in it."""

from __future__ import annotations

# test support: pytest's fixtures and factory_boy's model factories build rows for tests,
# wherever the file sits (`app/factories.py`, `core/factory.py`); a module importing
# factory_boy is test support where it defines a class on one of its `...Factory` classes
TEST_SUPPORT_IMPORTS = frozenset({"pytest"})
TEST_FACTORY_IMPORTS = frozenset({"factory", "factory_boy"})
