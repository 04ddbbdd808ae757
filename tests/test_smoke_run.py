"""The real-world smoke run: this machine's standard library and site-packages, zero internal errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "smoke_run.py"


@pytest.mark.slow
def test_stdlib_and_site_packages_produce_no_internal_error() -> None:
    # stderr is not captured: with `pytest -s` (as .ci/run runs the slow tests) progress shows
    result = subprocess.run([sys.executable, str(SCRIPT)], stdout=subprocess.PIPE, text=True, timeout=3000)
    print(result.stdout)  # files, lines, findings per code and time, in the pytest log
    assert "internal errors: 0" in result.stdout, result.stdout
    assert result.returncode == 0
    files = int(result.stdout.split("files: ")[1].split()[0])
    assert files > 1000  # it really walked the standard library
