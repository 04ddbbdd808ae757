"""A repository from a pull request is normal input (issue 33): it cannot crash idemlint, hang
it past its budget, inject output lines, or make it read or write outside the project.

Each test plants the hostile input in a real git-initialised folder beside an ordinary buggy
file and runs the real command line in a subprocess, as CI runs it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from idemlint.printable import printable

from conftest import KEY_IN_LOOP

BUGGY = KEY_IN_LOOP
BUGGY_FINDING = "shop/pay.py:11:"
# A retried POST, so the pre-filter sends the file to the parser
RETRIED = "import requests\nfor attempt in range(3):\n    requests.post('https://x')\n"


def repository(tmp_path: Path, files: dict[str, str | bytes]) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.idemlint]\n")
    for name, content in {"shop/pay.py": BUGGY, **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)
    return root


def idemlint(root: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "IDEMLINT_CACHE_DIR": str(root.parent / "cache")}
    if args[:1] == ("check",):  # every finding, however sure: what is printed is under test
        args = ("check", "--min-confidence", "low", *args[1:])
    return subprocess.run(
        [sys.executable, "-m", "idemlint", *args],
        capture_output=True,
        text=True,
        cwd=root,
        env=env,
        timeout=timeout,
        errors="surrogateescape",
    )


def finding_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if not line.startswith(" ")]


def test_a_module_that_crashes_libcst_is_one_idm900_and_the_run_reports_the_rest(tmp_path: Path) -> None:
    """5,000 nested parentheses crash libcst's native parser (SIGSEGV) when the project index
    parses them without the check's guards."""
    nested = "import requests\nx = " + "(" * 5000 + "1" + ")" * 5000 + "\n" + RETRIED
    root = repository(tmp_path, {"shop/nested.py": nested})
    started = time.monotonic()
    result = idemlint(root, "check", "--output-format", "concise", "--no-cache")
    assert time.monotonic() - started < 60
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith(BUGGY_FINDING) and "IDM001" in line for line in lines), result.stdout
    assert [line for line in lines if "shop/nested.py" in line] == [
        "shop/nested.py:1:1: IDM900 too deeply nested to analyse (5000 levels of brackets; the limit is 100)"
    ]
    assert "Traceback" not in result.stderr


def test_names_and_sql_identifiers_cannot_start_an_output_line(tmp_path: Path) -> None:
    injected = '"orders\\n::add-mask::secret\\n::error file=x.py::forged \\u001b]8;;x\\u0007"'
    race = f"""\
def pay(db, pk):
    row = db.execute('SELECT status FROM {injected} WHERE id = ?', (pk,)).fetchone()
    if row[0] == "pending":
        db.execute('UPDATE {injected} SET status = \\'paid\\' WHERE id = ?', (pk,))
"""
    root = repository(tmp_path, {"shop/race.py": race, "shop/new\nline::warning::x.py": BUGGY})
    for output_format in ("text", "concise", "pylint", "github", "junit", "json", "sarif", "gitlab"):
        result = idemlint(root, "check", "--no-cache", "--output-format", output_format, "--show-source")
        assert result.returncode == 1, result.stderr
        for line in (result.stdout + result.stderr).splitlines():
            assert not line.lstrip().startswith("::") or output_format == "github", (output_format, line)
            assert "\x1b" not in line and "\x07" not in line, (output_format, line)
        if output_format == "github":
            annotations = [line for line in result.stdout.splitlines() if line.startswith("::")]
            assert all(line.startswith(("::error ", "::warning ", "::notice ")) for line in annotations)
            assert len(annotations) == len(result.stdout.splitlines())
    concise = idemlint(root, "check", "--no-cache", "--output-format", "concise").stdout
    assert "shop/new\\x0aline::warning::x.py:11:" in concise
    assert "UPDATE of orders\\x0a::add-mask::secret\\x0a::error file=x.py::forged" in concise


def test_a_lone_surrogate_in_an_identifier_loses_no_report(tmp_path: Path) -> None:
    race = """\
def pay(db, pk):
    row = db.execute('SELECT status FROM "orders\\ud800" WHERE id = ?', (pk,)).fetchone()
    if row[0] == "pending":
        db.execute('UPDATE "orders\\ud800" SET status = \\'paid\\' WHERE id = ?', (pk,))
"""
    root = repository(tmp_path, {"shop/race.py": race})
    for output_format in ("text", "json", "sarif", "junit"):
        report = tmp_path / f"report.{output_format}"
        result = idemlint(
            root, "check", "--no-cache", "--exit-zero", "--output-format", output_format, "-o", str(report)
        )
        assert result.returncode == 0, result.stderr
        assert "orders\\ud800" in report.read_text(encoding="utf-8").replace("\\\\", "\\")


def test_links_to_devices_and_outside_files_are_skipped_with_one_line(tmp_path: Path) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text(BUGGY)
    root = repository(tmp_path, {})
    (root / "shop" / "zero.py").symlink_to("/dev/zero")
    (root / "shop" / "outside.py").symlink_to(outside)
    (root / "shop" / "inside.py").symlink_to(root / "shop" / "pay.py")  # a link within: the same file
    for command in (("check", "--output-format", "concise"), ("audit",)):
        result = idemlint(root, *command, timeout=60)
        assert result.returncode in (0, 1), result.stderr
        assert "secret" not in result.stdout and "outside.py:" not in result.stdout
        warnings = sorted(line for line in result.stderr.splitlines() if "skipped" in line)
        assert warnings == [
            "idemlint: warning: shop/outside.py: skipped: a symbolic link to a file outside the project root",
            "idemlint: warning: shop/zero.py: skipped: a symbolic link to something that is not a regular file",
        ], result.stderr


def test_fix_and_add_noqa_never_write_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "pay.py"
    outside.parent.mkdir()
    outside.write_text(BUGGY)
    root = repository(tmp_path, {})
    (root / "shop" / "pay.py").unlink()
    (root / "shop" / "pay.py").symlink_to(outside)
    named = idemlint(root, "check", "--no-cache", "--fix", "shop/pay.py")
    assert outside.read_text() == BUGGY
    assert "skipped: a symbolic link to a file outside the project root" in named.stderr
    inside = root / "lib" / "real.py"
    inside.parent.mkdir()
    inside.write_text(BUGGY)
    (root / "shop" / "pay.py").unlink()
    (root / "shop" / "pay.py").symlink_to(inside)
    fixed = idemlint(root, "check", "--no-cache", "--fix", "shop/pay.py")
    assert inside.read_text() == BUGGY
    assert "idemlint: shop/pay.py: cannot fix: it is a symbolic link; fix the file it links to" in fixed.stderr
    assert fixed.returncode == 2
    noqa = idemlint(root, "check", "--no-cache", "--add-noqa", "shop/pay.py")
    assert inside.read_text() == BUGGY
    assert "shop/pay.py" in noqa.stderr and noqa.returncode == 2


def test_exclude_patterns_that_would_backtrack_are_refused_or_skipped(tmp_path: Path) -> None:
    stars = "a" + "*a" * 10 + "b"
    root = repository(tmp_path, {"shop/" + "a" * 40 + ".py": BUGGY})
    refused = idemlint(root, "check", "--extend-exclude", stars, timeout=20)
    assert refused.returncode == 2
    assert (
        refused.stderr == f"idemlint: --extend-exclude: {stars!r} has more than 4 runs of `*`; simplify the pattern\n"
    )
    (root / "pyproject.toml").write_text(f'[tool.idemlint]\nextend-exclude = ["{stars}"]\n')
    configured = idemlint(root, "check", timeout=20)
    assert configured.returncode == 2 and "has more than 4 runs of `*`" in configured.stderr
    (root / "pyproject.toml").write_text("[tool.idemlint]\n")
    (root / ".gitignore").write_text(stars + "\n")
    started = time.monotonic()
    ignored = idemlint(root, "check", "--output-format", "concise", "--no-cache", timeout=20)
    assert time.monotonic() - started < 15
    assert ignored.returncode == 1 and "aaaa.py:11:" in ignored.stdout


def test_audit_markdown_cells_hold_no_markup(tmp_path: Path) -> None:
    source = """\
import requests

for attempt in range(3):
    requests.post("https://x.example/<img src=x onerror=alert(1)>|[click](https://evil.example)`x`")
"""
    root = repository(tmp_path, {"shop/hook.py": source})
    report = idemlint(root, "audit", "--format", "markdown").stdout
    (row,) = [line for line in report.splitlines() if "hook.py" in line]
    cells = re.split(r"(?<!\\)\|", row)[1:-1]  # GitHub splits a table row on every unescaped `|`
    assert len(cells) == 7
    target = cells[3].strip()
    # a code span (no HTML, no link, no emphasis), fenced longer than the backticks inside
    assert target == "`` https://x.example/<img src=x onerror=alert(1)>\\|[click](https://evil.example)`x` ``"
    assert [cell.strip() for cell in cells[:3]] == ["shop/hook.py:4", "requests", "` POST requests.post `"]


def test_a_configuration_above_the_repository_does_not_apply(tmp_path: Path) -> None:
    (tmp_path / "idemlint.toml").write_text('select = ["IDM800"]\n')
    root = repository(tmp_path, {})
    (root / "pyproject.toml").unlink()
    result = idemlint(root, "check", "--output-format", "concise", "--no-cache")
    assert BUGGY_FINDING in result.stdout
    settings = idemlint(root, "check", "--show-settings").stdout
    assert "configuration: (none: defaults)" in settings
    assert f"project root:  {root}" in settings


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\nb", "a\\x0ab"),
        ("tab\tkept", "tab\tkept"),
        ("\x1b[31mred", "\\x1b[31mred"),
        ("\x9bcsi", "\\x9bcsi"),
        ("\u2028line", "\\u2028line"),
        ("\u202eevil", "\\u202eevil"),
        ("\ud800", "\\ud800"),
        ("café ✓ 日本", "café ✓ 日本"),
    ],
)
def test_printable_escapes_what_could_break_a_line_or_drive_a_terminal(text: str, shown: str) -> None:
    assert printable(text) == shown


def test_the_budget_holds_on_a_thread_as_the_language_server_runs_checks() -> None:
    """The server analyses on a worker thread, where SIGALRM cannot reach: the budget must
    stop the work there too, and leave nothing pending once the work ended in time."""
    import threading

    from idemlint.parsing import Rejected, within_budget

    def forever() -> int:
        while True:
            time.sleep(0.01)

    outcome: list[object] = []
    started = time.monotonic()
    worker = threading.Thread(target=lambda: outcome.append(within_budget(forever, 0.3)))
    worker.start()
    worker.join(10)
    assert not worker.is_alive() and time.monotonic() - started < 5
    assert isinstance(outcome[0], Rejected) and "longer than 0.3 s" in outcome[0].message
    quick: list[object] = []

    def then_keep_working() -> None:
        quick.append(within_budget(lambda: 42, 0.05))
        time.sleep(0.2)  # past the budget: a late expiry must not strike here
        quick.append("after")

    worker = threading.Thread(target=then_keep_working)
    worker.start()
    worker.join(5)
    assert quick == [42, "after"]


def test_a_library_log_line_about_the_linted_sql_never_reaches_the_output(tmp_path: Path) -> None:
    """sqlglot warns on stderr about SQL it reads: a line from the repository's text that
    idemlint did not write."""
    source = """\
def claim(db, pk):
    db.execute("UPDATE jobs SET owner = (SELECT id FROM workers LIMIT 1 FOR UPDATE) WHERE id = %s", (pk,))
"""
    root = repository(tmp_path, {"shop/jobs.py": source})
    result = idemlint(root, "check", "--no-cache", "--output-format", "concise", "shop/jobs.py")
    assert result.stderr == "" and "FOR UPDATE" not in result.stdout


def test_one_line_bodies_the_index_reads_do_not_stop_the_run(tmp_path: Path) -> None:
    """A `return True` alone on a `def` or `if` line (a SimpleStatementSuite, not a block) in a
    module the project index summarises crashed the map once and took the whole run down."""
    model = (
        "import time\nfrom django.db import models\n\n\nclass Order(models.Model):\n"
        "    def has_perm(self, perm, obj=None): return True\n\n"
        "    def ready(self, warm):\n        if warm: time.sleep(1); return True\n        return False\n\n"
        "    def cancel(self):\n        self.status = 'cancelled'\n        self.save()\n"
    )
    root = repository(tmp_path, {"shop/models.py": model})
    result = idemlint(root, "check", "--output-format", "concise", "--no-cache")
    assert result.returncode == 1, result.stdout + result.stderr
    assert any(line.startswith(BUGGY_FINDING) for line in result.stdout.splitlines()), result.stdout
    assert "Traceback" not in result.stderr and "internal error" not in result.stdout + result.stderr
