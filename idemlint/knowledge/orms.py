"""Databases and ORMs: the kinds of write the data rules tell apart, and the ORM calls they read."""

from __future__ import annotations

# a write through an ORM's bulk update: `Order.objects.filter(...).update(...)`, `update(Order)`
DJANGO = "django"
SQLALCHEMY = "sqlalchemy"
# a read that fetches one row or fails with a 404
GET_OR_404 = frozenset({"django.shortcuts.get_object_or_404"})
