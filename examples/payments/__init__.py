"""A small payments service with a handful of retry and idempotency bugs, and their fixed twins.

`idemlint check examples/` reports the bugs; the *_fixed functions show the repair.
"""
