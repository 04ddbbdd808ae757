"""The real flake8, loading the plugin through its entry point, as editors and CI run it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import FIXTURES, FLAKE8_EVERY_FINDING, lint

FIXTURE_SAMPLE = [
    FIXTURES / "keys" / "IDM001_first_form.py",
    FIXTURES / "retry_policy" / "IDM201_retry_non_retryable.py",
    FIXTURES / "data_model" / "IDM101_django.py",
    FIXTURES / "external" / "IDM302_timeout_as_failure.py",
]


def flake8(
    *args: str, stdin: str | None = None, fmt: str = "%(row)d:%(col)d:%(code)s"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        # The fixtures live under tests/, which idemlint skips unless asked to check tests.
        [
            sys.executable,
            "-m",
            "flake8",
            "--isolated",
            "--select=IDM",
            "--idemlint-check-tests",
            "--idemlint-min-confidence=low",  # what the rules find; the default view is tested apart
            f"--format={fmt}",
            *args,
        ],
        capture_output=True,
        text=True,
        input=stdin,
    )


def parse(output: str) -> set[tuple[int, str]]:
    found = set()
    for line in output.splitlines():
        row, _col, code = line.rsplit(":", 2)
        found.add((int(row.rsplit(":", 1)[-1]), code))
    return found


@pytest.mark.parametrize("path", FIXTURE_SAMPLE, ids=lambda p: p.name)
def test_flake8_reports_the_same_findings_as_idemlint(path: Path) -> None:
    result = flake8(str(path))
    expected = {(f.line, f.code) for f in lint(path.read_text(encoding="utf-8"), path=path.name).findings}
    assert result.stderr == ""
    assert expected and parse(result.stdout) == expected


def test_flake8_with_two_jobs_over_several_files() -> None:
    result = flake8("-j", "2", *map(str, FIXTURE_SAMPLE), fmt="%(path)s:%(row)d:%(col)d:%(code)s")
    per_file = {
        str(p): {(f.line, f.code) for f in lint(p.read_text(encoding="utf-8"), path=p.name).findings}
        for p in FIXTURE_SAMPLE
    }
    got: dict[str, set[tuple[int, str]]] = {}
    for line in result.stdout.splitlines():
        name, row, _col, code = line.rsplit(":", 3)
        got.setdefault(name, set()).add((int(row), code))
    assert result.returncode == 1
    assert got == per_file


def test_flake8_stdin_uses_the_buffer_not_the_file(tmp_path: Path) -> None:
    on_disk = tmp_path / "pay.py"
    on_disk.write_text("x = 1\n")  # the saved file is clean; the editor buffer is not
    buffer = (FIXTURES / "keys" / "IDM001_first_form.py").read_text(encoding="utf-8")
    result = flake8("--stdin-display-name", str(on_disk), "-", stdin=buffer)
    expected = {(f.line, f.code) for f in lint(buffer).findings}
    assert parse(result.stdout) == expected


def test_flake8_noqa_applies_and_idm800_is_not_emitted(tmp_path: Path) -> None:
    source = (FIXTURES / "keys" / "IDM001_first_form.py").read_text(encoding="utf-8")
    lines = source.splitlines()
    lines[19] += "  # noqa: IDM001"  # line 20 holds the first finding
    lines[3] += "  # noqa: IDM002"  # suppresses nothing: flake8 owns noqa, no IDM800 here
    path = tmp_path / "svc.py"
    path.write_text("\n".join(lines) + "\n")
    expected = {(f.line, f.code) for f in lint(source).findings} - {(20, "IDM001")}
    assert parse(flake8(str(path)).stdout) == expected


def test_syntax_error_file_does_not_abort_flake8(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("from tenacity import retry\nidempotency_key = uuid.uuid4(\n")
    (tmp_path / "ok.py").write_text((FIXTURES / "keys" / "IDM001_first_form.py").read_text(encoding="utf-8"))
    result = flake8(str(tmp_path / "broken.py"), str(tmp_path / "ok.py"))
    assert "Traceback" not in result.stderr
    assert any(line.endswith(":IDM001") for line in result.stdout.splitlines())


def test_extend_select_is_needed_when_select_names_other_codes(tmp_path: Path) -> None:
    path = tmp_path / "svc.py"
    path.write_text((FIXTURES / "keys" / "IDM001_first_form.py").read_text(encoding="utf-8"))
    base = [sys.executable, "-m", "flake8", "--isolated", "--format=%(code)s"]
    dropped = subprocess.run([*base, "--select=E,F,W", str(path)], capture_output=True, text=True)
    kept = subprocess.run([*base, "--select=E,F,W", "--extend-select=IDM", str(path)], capture_output=True, text=True)
    assert "IDM001" not in dropped.stdout
    assert "IDM001" in kept.stdout


def test_test_files_are_skipped_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "test_payments.py"
    path.write_text((FIXTURES / "keys" / "IDM001_first_form.py").read_text(encoding="utf-8"))
    base = [sys.executable, "-m", "flake8", "--isolated", "--select=IDM", "--format=%(code)s"]
    assert subprocess.run([*base, str(path)], capture_output=True, text=True).stdout == ""
    assert (
        "IDM001" in subprocess.run([*base, "--idemlint-check-tests", str(path)], capture_output=True, text=True).stdout
    )


def test_plugin_options_reach_the_engine(tmp_path: Path) -> None:
    path = tmp_path / "svc.py"
    path.write_text(
        "import uuid\nimport requests\n\n\ndef charge():\n"
        "    for attempt in range(2):\n"
        "        try:\n"
        "            return requests.put('https://x', headers={'X-Txn-Token': str(uuid.uuid4())})\n"
        "        except requests.ConnectionError:\n"
        "            pass\n"
    )
    assert parse(flake8(str(path)).stdout) == set()
    assert parse(flake8("--idemlint-key-headers=X-Txn-Token", str(path)).stdout) == {(8, "IDM001")}


def test_readme_flake8_configuration_works(tmp_path: Path) -> None:
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    ini = next(b.split("```")[0] for b in readme.split("```ini\n")[1:] if "[flake8]" in b)
    (tmp_path / "setup.cfg").write_text(ini)
    (tmp_path / "svc.py").write_text(
        "import uuid\nimport requests\n\n\ndef charge():\n"
        "    for attempt in range(2):\n"
        "        try:\n"
        "            return requests.put('https://x', headers={'X-Txn-Token': str(uuid.uuid4())})\n"
        "        except requests.ConnectionError:\n"
        "            pass\n"
    )
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--format=%(row)d:%(code)s", "svc.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert "8:IDM001" in result.stdout.splitlines()


def test_flake8_offers_every_non_selection_option_of_the_config_schema() -> None:
    from idemlint.config import OPTIONS

    help_text = flake8("--help").stdout
    for option in OPTIONS:
        assert (f"--idemlint-{option.key}" in help_text) == option.in_flake8, option.key


def test_all_updates_need_count_reaches_the_engine_through_flake8(tmp_path: Path) -> None:
    path = tmp_path / "svc.py"
    path.write_text(
        "from shop.models import Order\n\n\ndef note(order_id):\n"
        "    Order.objects.filter(pk=order_id).update(note='seen')\n"
    )
    assert parse(flake8(str(path)).stdout) == set()
    assert parse(flake8("--idemlint-all-updates-need-count", str(path)).stdout) == {(5, "IDM102")}


def test_the_plugin_follows_calls_through_the_index_idemlint_stored(tmp_path: Path) -> None:
    """Without a stored index, flake8 sees only the file's own functions; after an
    `idemlint check` has stored the project's index (fresh: no file changed), the same
    flake8 run reports the POST behind the helper in another module."""
    import os
    import shutil

    project = tmp_path / "flat"
    shutil.copytree(Path(__file__).parent / "projects" / "flat", project)
    env = {**os.environ, "IDEMLINT_CACHE_DIR": str(tmp_path / "cache")}

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, capture_output=True, text=True, cwd=project, env=env)

    command = FLAKE8_EVERY_FINDING
    before = run(*command, "shop/services/notifications.py")
    assert "notifications.py:13:IDM301" not in before.stdout, before.stdout + before.stderr
    assert run(sys.executable, "-m", "idemlint", "check", "--exit-zero", "-q").returncode == 0
    after = run(*command, "shop/services/notifications.py")
    assert "notifications.py:13:IDM301" in after.stdout, after.stdout + after.stderr


def test_the_plugin_says_once_when_the_stored_index_is_out_of_date(tmp_path: Path) -> None:
    """A file edited after `idemlint check` makes the stored index stale: the plugin checks
    without it, and says so on stderr instead of silently dropping cross-module findings."""
    import os
    import shutil

    project = tmp_path / "flat"
    shutil.copytree(Path(__file__).parent / "projects" / "flat", project)
    env = {**os.environ, "IDEMLINT_CACHE_DIR": str(tmp_path / "cache")}

    def run(*command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(command, capture_output=True, text=True, cwd=project, env=env)

    assert run(sys.executable, "-m", "idemlint", "check", "--exit-zero", "-q").returncode == 0
    with (project / "shop" / "payments" / "client.py").open("a") as edited:
        edited.write("\n# edited since the index was stored\n")
    command = (sys.executable, "-m", "flake8", "-j", "1", "--select=IDM", "--format=%(path)s:%(row)d:%(code)s")
    after = run(*command, "shop/services/notifications.py", "shop/services/base.py")
    assert "notifications.py:13:IDM301" not in after.stdout
    assert after.stderr == (
        "idemlint: the project index stored by `idemlint check` is out of date (files changed since): "
        "findings that follow calls into other modules are missing until it runs again\n"
    )
