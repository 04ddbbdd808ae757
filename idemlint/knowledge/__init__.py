"""What idemlint knows about the world, each word defined once (issue 27).

The analyses match code against these definitions; nothing here imports the rest of
idemlint, so a new library or a new word is taught in one place (docs/architecture.md,
"Teaching idemlint a new library").
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def catalogue_digest() -> str:
    """A digest of the catalogue's text: part of every cache key, so a word taught between two
    releases re-checks what it may change (the caches are otherwise kept per version)."""
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]
