"""The command line, through click's runner and through the installed console script."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.cli import cli

from conftest import KEY_PER_DECORATED_ATTEMPT

BUGGY = KEY_PER_DECORATED_ATTEMPT
CLEAN = "import requests\n\n\ndef ping():\n    return requests.get('https://pay.example/health')\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "pay.py").write_text(BUGGY)
    (tmp_path / "app" / "health.py").write_text(CLEAN)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_findings_exit_1_with_location_code_and_help(project: Path) -> None:
    code, out, _ = run("check", "app")
    assert code == 1
    assert out.splitlines()[0].startswith("app/pay.py:8:15: IDM001 uuid.uuid4() runs on every attempt")
    assert out.splitlines()[1].startswith(
        "    help: The whole function is retried, so the key must come from outside it"
    )
    assert out.splitlines()[-1] == "Found 1 finding in 2 files checked (1 with none of the rules' words, not parsed)."


def test_the_summary_counts_the_files_checked_without_parsing(project: Path) -> None:
    """A file with none of the rules' words is not parsed (the pre-filter), so a syntax error
    there goes unreported: the summary says how many such files were counted as checked, warm
    run or cold."""
    (project / "app" / "broken.py").write_text("import requests\nx = (\n")  # no rule's vocabulary
    expected = "Found 1 finding in 3 files checked (2 with none of the rules' words, not parsed)."
    assert run("check", "app")[1].splitlines()[-1] == expected
    assert run("check", "app")[1].splitlines()[-1] == expected  # from the cache
    assert run("check", "--no-cache", "app/pay.py")[1].splitlines()[-1] == "Found 1 finding in 1 file checked."


def test_clean_files_exit_0(project: Path) -> None:
    summary = "Found 0 findings in 1 file checked (1 with none of the rules' words, not parsed).\n"
    assert run("check", "app/health.py") == (0, summary, "")


def test_exit_zero_and_quiet(project: Path) -> None:
    code, out, _ = run("check", "--exit-zero", "--quiet", "app")
    assert code == 0 and "Found" not in out and "IDM001" in out


def test_json_output_has_the_documented_keys(project: Path) -> None:
    code, out, _ = run("check", "--format", "json", "app")
    data = json.loads(out)
    assert code == 1
    assert data[0]["fingerprint"][:20].isalnum() and data[0]["fingerprint"][20:] == ":1"  # per occurrence, as SARIF
    assert data == [
        {
            "path": "app/pay.py",
            "line": 8,
            "column": 15,
            "end_line": 8,
            "end_column": 27,
            "code": "IDM001",
            "name": "key-regenerated-per-attempt",
            "message": data[0]["message"],
            "suggestion": data[0]["suggestion"],
            "severity": "error",
            "confidence": "high",
            "fingerprint": data[0]["fingerprint"],
            "fix_available": False,
            "related": [],
            "evidence": "in the function",
            "role": "source",
            "stakes": "external",
        }
    ]


def test_select_and_ignore_by_prefix(project: Path) -> None:
    assert run("check", "--ignore", "IDM0", "app")[0] == 0
    assert run("check", "--select", "IDM002", "app")[0] == 0
    assert run("check", "--select", "IDM0", "--ignore", "IDM002", "app")[0] == 1


def test_unknown_code_is_a_usage_error(project: Path) -> None:
    code, _, err = run("check", "--select", "IDM7", "app")
    assert code == 2 and "unknown rule code or prefix IDM7" in err


def test_missing_path_is_a_clear_error_and_other_paths_are_checked(project: Path) -> None:
    code, out, err = run("check", "nope.py", "app")
    assert code == 2
    assert "idemlint: nope.py: cannot read: no such file or directory" in err
    assert "app/pay.py:8:15: IDM001" in out


def test_syntax_error_file_gives_idm900_and_others_are_still_checked(project: Path) -> None:
    (project / "app" / "broken.py").write_text("from tenacity import retry\nidempotency_key = uuid.uuid4(\n")
    code, out, _ = run("check", "app")
    assert code == 1
    assert "app/broken.py:2:" in out and "IDM900" in out
    assert "app/pay.py:8:15: IDM001" in out


def test_config_select_and_bad_config_value(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.idemlint]\nignore = ['IDM001']\n")
    assert run("check", "app")[0] == 0
    (project / "pyproject.toml").write_text("[tool.idemlint]\nignore = 'IDM001'\n")
    code, _, err = run("check", "app")
    assert code == 2 and "[tool.idemlint] ignore must be a list of strings" in err
    (project / "pyproject.toml").write_text("[tool.idemlint\n")
    code, _, err = run("check", "app")
    assert code == 2 and "not valid TOML" in err


def test_cli_select_overrides_config(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.idemlint]\nignore = ['IDM001']\n")
    assert run("check", "--select", "IDM001", "--ignore", "IDM9", "app")[0] == 1


def test_excludes_and_gitignore_are_honoured(project: Path) -> None:
    (project / "build").mkdir()
    (project / "build" / "pay.py").write_text(BUGGY)
    (project / "generated").mkdir()
    (project / "generated" / "pay.py").write_text(BUGGY)
    (project / ".git").mkdir()
    (project / ".gitignore").write_text("generated/\n")
    code, out, _ = run("check", ".")
    assert code == 1
    assert "build/" not in out and "generated/" not in out
    (project / "pyproject.toml").write_text("[tool.idemlint]\nextend-exclude = ['app/pay.py']\n")
    assert run("check", ".")[0] == 0
    # Named explicitly, a file is checked unless --force-exclude (as pre-commit uses).
    assert run("check", "app/pay.py")[0] == 1
    assert run("check", "--force-exclude", "app/pay.py")[0] == 0


def test_rules_lists_every_code() -> None:
    code, out, _ = run("rules")
    assert code == 0
    assert [line.split()[:2] for line in out.splitlines()] == [
        ["IDM001", "key-regenerated-per-attempt"],
        ["IDM002", "clock-in-key"],
        ["IDM003", "content-hash-key"],
        ["IDM101", "read-decide-write"],
        ["IDM102", "ignored-update-count"],
        ["IDM103", "non-monotonic-transition"],
        ["IDM201", "retry-non-retryable"],
        ["IDM202", "retry-without-jitter"],
        ["IDM203", "unbounded-retry"],
        ["IDM301", "unkeyed-retried-side-effect"],
        ["IDM302", "timeout-as-failure"],
        ["IDM800", "unused-suppression"],
        ["IDM900", "parse-error"],
    ]


def test_explain_prints_sections_and_rejects_unknown_codes() -> None:
    code, out, _ = run("explain", "IDM001")
    assert code == 0
    for heading in (
        "# IDM001 key-regenerated-per-attempt",
        "## What it does",
        "## Why is this bad?",
        "## Example",
        "## Use instead",
        "## Fix safety",
    ):
        assert heading in out
    assert run("explain", "key-regenerated-per-attempt")[1] == out
    code, _, err = run("explain", "IDM777")
    assert code == 2 and "unknown rule 'IDM777'" in err


def test_installed_console_script_and_module_entry_point(project: Path) -> None:
    script = shutil.which("idemlint")
    assert script is not None, "the console script is installed by `pip install .`"
    for command in ([script], [sys.executable, "-m", "idemlint"]):
        result = subprocess.run(
            [*command, "check", "--format", "json", "app"], capture_output=True, text=True, cwd=project
        )
        assert result.returncode == 1, result.stderr
        assert [(d["path"], d["line"], d["code"]) for d in json.loads(result.stdout)] == [("app/pay.py", 8, "IDM001")]
    result = subprocess.run([script, "explain", "IDM002"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("# IDM002 clock-in-key")
    result = subprocess.run([script, "check", "missing_dir"], capture_output=True, text=True, cwd=project)
    assert result.returncode == 2 and "missing_dir: cannot read: no such file or directory" in result.stderr
    assert "Traceback" not in result.stderr


def test_help_rules_and_explain_do_not_import_libcst() -> None:
    # pre-commit pays start-up on every commit: libcst (0.2-0.3 s) loads only to analyse a file.
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from idemlint.cli import cli\n"
        "for args in (['--help'], ['rules'], ['explain', 'IDM101'], ['check', '--help']):\n"
        "    assert CliRunner().invoke(cli, args).exit_code == 0, args\n"
        "assert 'libcst' not in sys.modules, 'libcst was imported'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_a_file_rejected_by_the_pre_filter_does_not_import_libcst(tmp_path: Path) -> None:
    (tmp_path / "plain.py").write_text("def add(a, b):\n    return a + b\n")
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from idemlint.cli import cli\n"
        f"result = CliRunner().invoke(cli, ['check', {str(tmp_path / 'plain.py')!r}])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert 'libcst' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


LOOP_BUG = """\
import random
import time
import uuid

import requests


def charge(order):
    for attempt in range(3):
        key = str(uuid.uuid4())
        try:
            return requests.post("https://pay.example", headers={"Idempotency-Key": key}, timeout=5)
        except requests.ConnectionError:
            time.sleep(random.uniform(0, 2**attempt))
"""


def test_diff_prints_the_fix_and_writes_nothing(project: Path) -> None:
    (project / "app" / "loop.py").write_text(LOOP_BUG)
    code, out, _ = run("check", "--diff", "--no-cache", "app/loop.py")
    assert code == 1
    assert out.startswith("--- a/app/loop.py\n+++ b/app/loop.py\n")
    assert "+    key = str(uuid.uuid4())\n" in out and "-        key = str(uuid.uuid4())\n" in out
    assert (project / "app" / "loop.py").read_text() == LOOP_BUG


def test_fix_writes_keeps_crlf_and_settles(project: Path) -> None:
    (project / "app" / "loop.py").write_bytes(LOOP_BUG.replace("\n", "\r\n").encode())
    code, out, err = run("check", "--fix", "--no-cache", "app/loop.py")
    assert (code, out.splitlines()[-1]) == (0, "Found 0 findings in 1 file checked.")
    assert "fixed 1 finding in 1 file" in err
    fixed = (project / "app" / "loop.py").read_bytes()
    assert b"\r\n    key = str(uuid.uuid4())\r\n    for attempt" in fixed and b"\n" not in fixed.replace(b"\r\n", b"")
    assert run("check", "--diff", "--no-cache", "app/loop.py")[0] == 0


def test_unsafe_fixes_need_the_flag(project: Path) -> None:
    source = LOOP_BUG.replace("time.sleep(random.uniform(0, 2**attempt))", "time.sleep(1)")
    (project / "app" / "loop.py").write_text(source)
    run("check", "--fix", "--no-cache", "app/loop.py")
    assert "time.sleep(1)" in (project / "app" / "loop.py").read_text()
    run("check", "--fix", "--unsafe-fixes", "--no-cache", "app/loop.py")
    assert "time.sleep(random.uniform(0, 1))" in (project / "app" / "loop.py").read_text()


@pytest.mark.parametrize("columns", ["40", "80", "200"])
def test_help_lists_every_command_with_its_whole_short_help(columns: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", columns)
    out = CliRunner().invoke(cli, ["--help"], terminal_width=int(columns)).stdout
    commands = " ".join(out.split("Commands:", 1)[1].split())
    assert "..." not in commands and "e.g." not in commands
    for name, command in cli.commands.items():
        assert f"{name} {command.get_short_help_str()}" in commands
        assert command.get_short_help_str().endswith(".")
