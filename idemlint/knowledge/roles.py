"""What a module's imports say about the code in it."""

from __future__ import annotations

# test support: pytest's fixtures and factory_boy's model factories build rows for tests,
# wherever the file sits (`app/factories.py`, `core/factory.py`): a module importing pytest at
# its top, or defining a class on one of factory_boy's factory classes
TEST_SUPPORT_IMPORTS = frozenset({"pytest"})
TEST_FACTORY_BASES = frozenset(
    {
        "factory.Factory",
        "factory.DictFactory",
        "factory.ListFactory",
        "factory.StubFactory",
        "factory.base.Factory",
        "factory.django.DjangoModelFactory",
        "factory.alchemy.SQLAlchemyModelFactory",
        "factory.mongoengine.MongoEngineFactory",
        "factory.mogo.MogoFactory",
    }
)
