"""A stand-in for a native crash in a worker process, importable by forked workers."""

from __future__ import annotations

import os
from pathlib import Path

from idemlint import runner

REAL_CHECK_ONE = runner._check_one


def crash_on_marker(job, config, rules):  # type: ignore[no-untyped-def]
    source = job.source if job.source is not None else Path(job.path).read_bytes()
    if b"KILL_THE_WORKER" in source:
        os._exit(139)  # what a segfault in the native parser looks like to the pool
    return REAL_CHECK_ONE(job, config, rules)
