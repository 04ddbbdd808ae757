"""Run idemlint over this machine's standard library and site-packages.

Asserts zero internal errors (a rule crashing, a worker dying) and prints what was checked:
files, lines, findings per code, parse errors, time. Exit status 1 when any internal error
occurred. Usage: python scripts/smoke_run.py [--jobs N] [PATH ...]
"""

from __future__ import annotations

import argparse
import collections
import site
import sys
import sysconfig
import time
from pathlib import Path

from idemlint.config import Config
from idemlint.files import discover
from idemlint.rules import ALL_RULES
from idemlint.runner import RunResult, run


def default_roots() -> list[str]:
    roots = [sysconfig.get_paths()["stdlib"], *site.getsitepackages()]
    return [r for r in dict.fromkeys(roots) if Path(r).is_dir()]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("paths", nargs="*")
    parser.add_argument("--jobs", type=int, default=None)
    args = parser.parse_args(argv)
    roots = args.paths or default_roots()
    # Only bytecode caches are skipped: site-packages and test suites are what we want here.
    config = Config(exclude=("__pycache__",), root=Path("/"))
    started = time.perf_counter()
    found = discover(roots, config, respect_gitignore=False)
    lines = 0
    for path, _shown in found.files:
        try:
            lines += path.read_bytes().count(b"\n")
        except OSError:
            pass
    result = RunResult()
    chunk = 400  # progress on stderr after each chunk: a long run never looks hung
    for start in range(0, len(found.files), chunk):
        part = run(found.files[start : start + chunk], config, ALL_RULES, jobs=args.jobs)
        result.findings.extend(part.findings)
        result.errors.extend(part.errors)
        done = min(start + chunk, len(found.files))
        print(f"smoke run: {done}/{len(found.files)} files, {time.perf_counter() - started:.0f} s", file=sys.stderr)
    elapsed = time.perf_counter() - started
    counts = collections.Counter(f.code for f in result.findings)
    print(f"roots: {', '.join(roots)}")
    print(f"files: {len(found.files)}  lines: {lines}  time: {elapsed:.1f} s")
    print("findings per code: " + (", ".join(f"{code} {n}" for code, n in sorted(counts.items())) or "none"))
    print(f"discovery errors: {len(found.errors)}")
    print(f"internal errors: {len(result.errors)}")
    for message in result.errors[:20]:
        print(f"  {message}")
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
