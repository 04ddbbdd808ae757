"""The real-world smoke run: this machine's standard library and site-packages, zero internal errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "smoke_run.py"


def test_stdlib_and_site_packages_produce_no_internal_error() -> None:
    result = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=3000)
    print(result.stdout)  # files, lines, findings per code and time, in the pytest log
    assert "internal errors: 0" in result.stdout, result.stdout + result.stderr
    assert result.returncode == 0
    files = int(result.stdout.split("files: ")[1].split()[0])
    assert files > 1000  # it really walked the standard library
