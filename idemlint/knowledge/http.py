"""HTTP methods: which change something on the server, and which of those a repeat repeats."""

from __future__ import annotations

# the methods that change something on the server (upper case, as a request names them)
WRITE_METHODS = ("POST", "PUT", "PATCH", "DELETE")
# of those, the ones a second identical request can apply twice (PUT and DELETE are
# idempotent by definition, RFC 9110 9.2.2)
NOT_IDEMPOTENT_METHODS = frozenset({"POST", "PATCH"})
# the module-level functions and client methods named for a writing method (`requests.post`)
WRITE_METHOD_FUNCTIONS = frozenset(method.lower() for method in WRITE_METHODS)
