"""Small habits users bring from ruff and flake8 (issue 26's low items): each one exact."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.cli import cli

from conftest import KEY_IN_LOOP, SLEEP_IN_LOOP


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pay.py").write_text(KEY_IN_LOOP)
    (tmp_path / "wait.py").write_text(SLEEP_IN_LOOP)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_config_file_is_read_by_its_content_whatever_its_name(project: Path) -> None:
    (project / "ci.toml").write_text('selct = ["IDM001"]\n')
    code, out, err = run("check", "--config", "ci.toml", "pay.py")
    assert (code, out) == (2, "")
    assert err.startswith("idemlint: ci.toml: [tool.idemlint] selct: unknown option; did you mean 'select'?")
    (project / "ci.toml").write_text('select = ["IDM202"]\n')
    code, out, _ = run("check", "--config", "ci.toml", "--output-format", "concise", ".")
    assert code == 1 and [line.split()[1] for line in out.splitlines()] == ["IDM202"]


def test_an_empty_select_in_the_configuration_is_refused(project: Path) -> None:
    (project / "pyproject.toml").write_text("[tool.idemlint]\nselect = []\n")
    code, out, err = run("check", ".")
    assert (code, out) == (2, "")
    assert "select = []: name at least one code or prefix (or leave select out to select all)" in err


def test_jobs_auto(project: Path) -> None:
    assert run("check", "--no-cache", "-j", "auto", "-q", ".")[0] == 1
    code, _, err = run("check", "-j", "many", ".")
    assert code == 2 and "'many' is not a number of workers or `auto`" in err


def test_statistics_prints_only_the_table(project: Path) -> None:
    code, out, _ = run("check", "--no-cache", "--statistics", ".")
    assert (code, out) == (1, "     1  IDM001\n     1  IDM202\n")


def test_no_zero_fixable_line(project: Path) -> None:
    code, out, _ = run("check", "--no-cache", "wait.py")
    assert code == 1
    assert "[*] 0 fixable" not in out
    assert "No safe fixes available (1 hidden fix with `--fix --unsafe-fixes`).\n" in out


def test_fixing_standard_input_lists_what_is_left_on_stderr(project: Path) -> None:
    code, out, err = run("check", "-", "--fix", "--stdin-filename", "wait.py", stdin=SLEEP_IN_LOOP)
    assert (code, out) == (1, SLEEP_IN_LOOP)
    assert err.startswith("wait.py:") and " IDM202 " in err


def test_no_summary_line_when_nothing_named_could_be_read(project: Path) -> None:
    code, out, err = run("check", "missing.py")
    assert (code, out, err) == (2, "", "idemlint: missing.py: cannot read: no such file or directory\n")


def test_show_source_escapes_the_line_and_aligns_the_caret_by_display_width(project: Path) -> None:
    source = (
        "import uuid\nimport requests\n\n\ndef charge(order):\n    for attempt in range(3):\n        try:\n"
        '            return requests.post("https://pay.example/\u65e5\u672c\x1b[2J", '
        'headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=5)\n'
        "        except requests.ConnectionError:\n            continue\n"
    )
    (project / "pay.py").write_text(source)
    code, out, _ = run("check", "--no-cache", "--show-source", "--output-format", "text", "pay.py")
    assert code == 1
    lines = out.splitlines()
    (number,) = [i for i, line in enumerate(lines) if line.startswith("pay.py:") and "IDM001" in line]
    shown, carets = lines[number + 1], lines[number + 2]
    assert "\x1b" not in shown and "\\x1b[2J" in shown
    column = shown.index("uuid.uuid4()")
    width = column + sum(1 for c in shown[:column] if c in "\u65e5\u672c")  # two columns each
    assert carets.index("^") == width and carets.strip(" |0123456789") == "^" * len("uuid.uuid4()")


def test_junit_lists_every_checked_file(project: Path) -> None:
    import xml.etree.ElementTree as ET

    (project / "clean.py").write_text("x = 1\n")
    code, out, _ = run("check", "--no-cache", "--output-format", "junit", ".")
    assert code == 1
    cases = {c.get("name"): len(c.findall("failure")) for c in ET.fromstring(out).iter("testcase")}
    assert cases == {"clean.py": 0, "pay.py": 1, "wait.py": 1}
