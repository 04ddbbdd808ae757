"""Paths anchored to the project, bad paths and option combinations: one line, the documented
exit code, never a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.cli import cli

from conftest import KEY_PER_DECORATED_ATTEMPT

BUGGY = KEY_PER_DECORATED_ATTEMPT
RACE = """\
from shop.models import Order


def ship(order_id):
    order = Order.objects.get(pk=order_id)
    if order.status == "paid":
        order.status = "shipped"
        order.save()
"""


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def nested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project reached through a folder named tests/."""
    project = tmp_path / "work" / "tests" / "proj"
    (project / "app").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'proj'\n[tool.idemlint]\n")
    (project / "app" / "pay.py").write_text(BUGGY)
    (project / "tests").mkdir()
    (project / "tests" / "test_pay.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    return project


def findings_of(*args: str) -> list[tuple[str, int, str]]:
    code, out, err = run("check", "--format", "json", "--no-cache", "--min-confidence", "low", *args)
    found = [(f["path"], f["line"], f["code"]) for f in json.loads(out)]
    assert code == (1 if found else 0), err
    return found


def test_a_project_reached_through_a_tests_folder_is_checked(nested: Path) -> None:
    from_outside = findings_of("work/tests/proj")
    assert from_outside == [("work/tests/proj/app/pay.py", 8, "IDM001")]
    os.chdir(nested)
    assert findings_of() == [("app/pay.py", 8, "IDM001")]
    code, out, _ = run("check", "--no-cache")
    assert "in 1 file checked; skipped 1 test file (`check-tests = true` to include them)." in out


def test_a_test_file_named_on_the_command_line_is_checked(nested: Path) -> None:
    assert findings_of("work/tests/proj/tests/test_pay.py") == [("work/tests/proj/tests/test_pay.py", 8, "IDM001")]


def test_pytest_roots_and_migration_modules_are_recognised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    for folder in ("t/integration", "unitcheck", "app", "ecommerce"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "t" / "integration" / "conftest.py").write_text("")
    (tmp_path / "t" / "integration" / "tasks.py").write_text(BUGGY)
    (tmp_path / "unitcheck" / "pay.py").write_text(BUGGY)
    (tmp_path / "setup.cfg").write_text("[tool:pytest]\ntestpaths = unitcheck apps\n")
    # A package named as a test path holds the code under test: only its test files are tests.
    (tmp_path / "apps" / "billing" / "tests").mkdir(parents=True)
    (tmp_path / "apps" / "__init__.py").write_text("")
    (tmp_path / "apps" / "billing" / "api.py").write_text(BUGGY)
    (tmp_path / "apps" / "billing" / "tests" / "helpers.py").write_text(BUGGY)
    # A Django app with a conftest.py beside its modules is still production code.
    (tmp_path / "ecommerce" / "conftest.py").write_text("")
    (tmp_path / "ecommerce" / "api.py").write_text(BUGGY)
    # A folder named for tests (`test_client/`) that holds a conftest.py is a pytest root.
    (tmp_path / "test_client" / "helpers").mkdir(parents=True)
    (tmp_path / "test_client" / "conftest.py").write_text("")
    (tmp_path / "test_client" / "helpers" / "wait.py").write_text(BUGGY)
    (tmp_path / "app" / "migrations.py").write_text(RACE)
    (tmp_path / "app" / "views.py").write_text(RACE)
    monkeypatch.chdir(tmp_path)
    assert findings_of() == [
        ("app/views.py", 7, "IDM101"),
        ("apps/billing/api.py", 8, "IDM001"),
        ("ecommerce/api.py", 8, "IDM001"),
    ]


@pytest.mark.parametrize(
    "args",
    [
        ("check", "--output", "{d}/nodir/r.txt", "{p}"),
        ("check", "--write-baseline", "{d}/nodir/b.json", "{p}"),
        ("audit", "--output", "{d}/nodir/a.txt", "{p}"),
    ],
    ids=["output", "write-baseline", "audit-output"],
)
def test_output_files_go_into_new_folders(tmp_path: Path, args: tuple[str, ...]) -> None:
    (tmp_path / "pay.py").write_text(BUGGY)
    filled = [a.format(d=tmp_path, p=tmp_path / "pay.py") for a in args]
    code, _, err = run(*filled, "--no-cache") if args[0] == "check" else run(*filled)
    target = Path(filled[2])
    assert target.is_file() and code in (0, 1), err


def test_bad_paths_never_give_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "file.txt").write_text("")
    (tmp_path / "pay.py").write_text(BUGGY)
    bad = {
        "symlink loop": ["check", str(tmp_path / "loop"), str(tmp_path / "pay.py")],
        "no such file or directory": ["check", str(tmp_path / "missing.py")],
        "cannot create its folder": ["check", "--output", str(tmp_path / "file.txt" / "r.txt"), str(tmp_path)],
        "is a directory": ["check", "--output", str(tmp_path), str(tmp_path / "pay.py")],
        "malformed": ["check", "--baseline", str(tmp_path / "pay.py"), str(tmp_path / "pay.py")],
    }
    for reason, args in bad.items():
        code, out, err = run(*args, "--no-cache")
        assert code == 2, (reason, out, err)
        assert "Traceback" not in out + err
        assert any(line.startswith("idemlint: ") and reason in line for line in err.splitlines()), (reason, err)
    # the symlink loop does not stop the other path from being checked (exit 2 for the loop)
    code, out, err = run("check", "--format", "json", str(tmp_path / "loop"), str(tmp_path / "pay.py"), "--no-cache")
    assert code == 2 and err.strip() == f"idemlint: {tmp_path / 'loop'}: cannot read: symlink loop"
    assert [(f["line"], f["code"]) for f in json.loads(out)] == [(8, "IDM001")]


def test_a_symlinked_file_and_its_target_are_one_file(tmp_path: Path) -> None:
    (tmp_path / "pay.py").write_text(BUGGY)
    (tmp_path / "alias.py").symlink_to(tmp_path / "pay.py")
    # the link sorts first and stands for the file; the target is not reported again
    assert findings_of(str(tmp_path)) == [(f"{tmp_path / 'alias.py'}", 8, "IDM001")]


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("--diff", "--output", "r.txt"), "--diff prints a unified diff"),
        (("--diff", "--format", "json"), "--diff prints a unified diff"),
        (("--unsafe-fixes",), "--unsafe-fixes only works with --fix or --diff"),
        (("--select", ""), '--select "": name at least one code'),
    ],
)
def test_option_combinations_that_would_be_ignored_are_refused(
    tmp_path: Path, args: tuple[str, ...], reason: str
) -> None:
    (tmp_path / "pay.py").write_text(BUGGY)
    code, _, err = run("check", *args, str(tmp_path / "pay.py"))
    assert code == 2 and reason in err and len(err.strip().splitlines()) == 1


def test_diff_honours_exit_zero(tmp_path: Path) -> None:
    (tmp_path / "pay.py").write_text(
        "import uuid, requests\n\n\ndef f():\n    for attempt in range(3):\n        try:\n            return requests.post('u', headers={'Idempotency-Key': str(uuid.uuid4())})\n        except ConnectionError:\n            continue\n"
    )
    code, out, _ = run("check", "--diff", "--exit-zero", "--no-cache", str(tmp_path / "pay.py"))
    assert code == 0 and "+    idempotency_key = str(uuid.uuid4())" in out


def test_cli_select_replaces_the_configured_selection(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.idemlint]\nignore = ['IDM001']\n")
    (tmp_path / "pay.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    assert findings_of() == []
    assert findings_of("--select", "IDM001") == [("pay.py", 8, "IDM001")]
    assert findings_of("--select", "IDM0", "--ignore", "IDM001") == []


def test_parse_errors_are_on_unless_ignored_by_name(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text(BUGGY + "def broken(:\n")
    path = str(tmp_path / "broken.py")
    assert [c for _, _, c in findings_of("--select", "IDM001", path)] == ["IDM900"]
    assert findings_of("--ignore", "IDM900", path) == []


def test_colour_follows_the_option_and_no_color(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from idemlint import console

    (tmp_path / "pay.py").write_text(BUGGY)
    assert "\x1b[1;31mIDM001" in run("check", "--color", "always", "--no-cache", str(tmp_path))[1]
    assert "\x1b[" not in run("check", "--color", "never", "--no-cache", str(tmp_path))[1]
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    monkeypatch.setenv("NO_COLOR", "1")
    assert console.colour("auto") is False
    monkeypatch.delenv("NO_COLOR")
    assert console.colour("auto") is True


def test_the_cache_lives_outside_the_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "user-cache"
    monkeypatch.setenv("IDEMLINT_CACHE_DIR", str(cache))
    project = tmp_path / "proj"
    project.mkdir()
    (project / ".git").mkdir()
    (project / "pay.py").write_text(BUGGY)
    monkeypatch.chdir(project)
    first = run("check", "--format", "json")[1]
    assert not any(p.name.startswith(".idemlint") for p in project.iterdir())
    entries = list(cache.rglob("results-*.bin"))
    assert entries
    # a planted cache in the repository has no effect, and a corrupt user cache is recomputed
    (project / ".idemlint_cache").mkdir()
    intact = entries[0].read_bytes()
    for entry in entries:
        (project / ".idemlint_cache" / entry.name).write_bytes(entry.read_bytes())
    for broken in (b"[]", b"not json", intact[:-3]):
        for entry in entries:
            entry.write_bytes(broken)
        assert run("check", "--format", "json")[1] == first


def test_a_config_typo_gets_a_suggestion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.idemlint]\nstate_column = ['lifecycle']\n")
    (tmp_path / "pay.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    code, _, err = run("check", "--no-cache")
    assert code == 2 and "did you mean 'state-columns'?" in err and len(err.strip().splitlines()) == 1


def test_results_do_not_depend_on_the_folder_idemlint_runs_from(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "work" / "tests" / "proj"
    (root / "app").mkdir(parents=True)
    (root / "legacy").mkdir()
    (root / "pyproject.toml").write_text('[tool.idemlint]\nper-file-ignores = { "legacy/*" = ["IDM001"] }\n')
    (root / "app" / "pay.py").write_text(BUGGY)
    (root / "legacy" / "old.py").write_text(BUGGY)

    def sarif(*args: str) -> tuple[list[str], str]:
        code, out, err = run("check", "--no-cache", "--format", "sarif", *args)
        log = json.loads(out)["runs"][0]
        uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in log["results"]]
        return uris, log["originalUriBaseIds"]["%SRCROOT%"]["uri"]

    monkeypatch.chdir(root)
    at_root = sarif()
    assert at_root == (["app/pay.py"], root.resolve().as_uri() + "/")
    assert run("check", "--no-cache", "--write-baseline", "baseline.json")[0] == 0
    monkeypatch.chdir(root / "app")
    assert sarif("..") == at_root  # per-file-ignores and URIs anchored to the root
    assert sarif(str(root / "legacy")) == ([], at_root[1])
    code, out, _ = run("check", "--no-cache", "--baseline", "../baseline.json", "..")
    assert code == 0 and "Found 0 findings" in out  # the baseline written at the root matches here
    monkeypatch.chdir(tmp_path)
    assert sarif("work/tests/proj") == at_root


def test_force_exclude_applies_the_test_policy_to_named_files(nested: Path) -> None:
    named = "work/tests/proj/tests/test_pay.py"
    assert findings_of(named) == [(named, 8, "IDM001")]
    assert findings_of("--force-exclude", named) == []


PATH_OPTIONS = [
    ("check", None),
    ("check", "--output"),
    ("check", "--config"),
    ("check", "--write-baseline"),
    ("check", "--baseline"),
    ("audit", None),
    ("audit", "--output"),
    ("audit", "--config"),
]
BAD_PATHS = ["missing.py", "nodir/missing.txt", "folder", "loop", "file.txt/below"]


@pytest.mark.parametrize(("command", "option"), PATH_OPTIONS, ids=lambda v: str(v))
@pytest.mark.parametrize("bad", BAD_PATHS)
def test_every_path_option_with_a_bad_path_gives_one_line_never_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, option: str | None, bad: str
) -> None:
    (tmp_path / "folder").mkdir()
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    (tmp_path / "file.txt").write_text("")
    (tmp_path / "pay.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    args = [command, bad] if option is None else [command, option, bad, "pay.py"]
    if command == "check":
        args.append("--no-cache")
    result = CliRunner().invoke(cli, args)
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit), result.exception
    assert "Traceback" not in result.output
    assert result.exit_code in (0, 1, 2)
    if result.exit_code == 2:
        errors = [line for line in result.stderr.splitlines() if line.startswith(("idemlint: ", "Error: "))]
        assert errors, result.stderr


def test_stdin_is_checked_as_the_named_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.idemlint]\nper-file-ignores = { "legacy/*" = ["IDM001"] }\n')
    monkeypatch.chdir(tmp_path)

    def check(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(cli, ["check", "-", *args], input=BUGGY)
        return result.exit_code, result.stdout

    code, out = check("--stdin-filename", "app/pay.py")
    assert code == 1 and out.startswith("app/pay.py:8:")
    assert check("--stdin-filename", "legacy/pay.py") == (0, "")  # per-file-ignores by that name
    assert check("--stdin-filename", "tests/test_pay.py") == (0, "")  # a test file by that name
    code, out = check("--stdin-filename", "app/pay.py", "--fix")
    assert (code, out) == (1, BUGGY)  # the buffer on stdout (a decorator's key has no safe fix)


def test_extend_select_and_extend_ignore_add_to_what_is_in_force(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.idemlint]\nselect = ['IDM2']\nextend-select = ['IDM001']\n")
    (tmp_path / "pay.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    assert findings_of() == [("pay.py", 8, "IDM001")]
    assert findings_of("--extend-ignore", "IDM001") == []
    assert findings_of("--select", "IDM2") == []  # --select replaces the configured extensions too
    assert findings_of("--isolated") == [("pay.py", 8, "IDM001")]  # no configuration: every rule


def test_show_settings_and_show_files(nested: Path) -> None:
    os.chdir(nested)
    code, out, _ = run("check", "--show-settings")
    assert code == 0 and f"configuration: {nested / 'pyproject.toml'}" in out and "enabled rules" in out
    code, out, _ = run("check", "--show-files")
    assert out.splitlines() == [
        "app/pay.py",
        "tests/test_pay.py  (skipped: test file; `check-tests = true` to include)",
    ]


def test_rules_as_json_for_tools() -> None:
    result = CliRunner().invoke(cli, ["rules", "--output-format", "json"])
    rows = json.loads(result.stdout)
    assert [r["code"] for r in rows][:3] == ["IDM001", "IDM002", "IDM003"]
    assert set(rows[0]) == {"code", "name", "family", "severity", "confidence", "measured", "fixable", "summary"}
    measured = rows[0]["measured"]  # the precision judged on real code (idemlint/data/calibration.json)
    assert measured is None or set(measured) == {"true", "judged", "precision"}


def test_exit_non_zero_on_fix(tmp_path: Path) -> None:
    source = (
        "import uuid, requests\n\n\ndef f():\n    for attempt in range(2):\n        try:\n"
        "            return requests.post('u', headers={'Idempotency-Key': str(uuid.uuid4())})\n"
        "        except ConnectionError:\n            continue\n"
    )
    (tmp_path / "pay.py").write_text(source)
    code, _, _ = run("check", "--fix", "--exit-non-zero-on-fix", "--no-cache", str(tmp_path / "pay.py"))
    assert code == 1
    code, _, _ = run("check", "--fix", "--exit-non-zero-on-fix", "--no-cache", str(tmp_path / "pay.py"))
    assert code == 0  # nothing left to fix, nothing reported


@pytest.mark.parametrize("name", ["concise", "gitlab", "junit", "pylint"])
def test_the_ci_formats_from_the_command_line(nested: Path, name: str) -> None:
    os.chdir(nested / "app")
    code, out, _ = run("check", "--no-cache", "--output-format", name, "..")
    assert code == 1
    expected = {
        "concise": "../app/pay.py:8:15: IDM001 ",
        "gitlab": '"path": "app/pay.py"',
        "junit": 'name="app/pay.py"',
        "pylint": "../app/pay.py:8: [IDM001] ",
    }
    assert expected[name] in out


RETRY_LOOP = (
    "import uuid, requests\n\n\ndef f():\n    for attempt in range(3):\n        try:\n"
    "            return requests.post('u', headers={'Idempotency-Key': str(uuid.uuid4())})\n"
    "        except ConnectionError:\n            continue\n"
)


def test_show_source_marks_fixable_findings_and_counts_them(tmp_path: Path) -> None:
    (tmp_path / "pay.py").write_text(RETRY_LOOP)
    code, out, _ = run("check", "--no-cache", "--show-source", str(tmp_path / "pay.py"))
    lines = out.splitlines()
    head = next(i for i, line in enumerate(lines) if " IDM001 [*] " in line)
    assert (
        lines[head + 1] == "  7 |             return requests.post('u', headers={'Idempotency-Key': str(uuid.uuid4())})"
    )
    caret = lines[head + 2]
    assert caret.endswith("^" * len("uuid.uuid4()")) and caret.index("^") == lines[head + 1].index("uuid.uuid4()")
    assert "[*] 1 fixable with `--fix`." in out
    assert "  7 | " not in run("check", "--no-cache", "--no-show-source", str(tmp_path / "pay.py"))[1]


def test_fix_only_show_fixes_and_add_noqa(tmp_path: Path) -> None:
    target = tmp_path / "pay.py"
    target.write_text(RETRY_LOOP)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--fix-only", "--show-fixes", str(target)])
    assert result.exit_code == 0 and result.stdout == ""
    assert "IDM001 generate idempotency_key once, before the retry loop" in result.stderr
    (tmp_path / "task.py").write_text(BUGGY)
    code, _, err = run("check", "--no-cache", "--add-noqa", str(tmp_path / "task.py"))
    assert code == 0 and "added noqa comments to 1 line" in err
    assert "  # noqa: IDM001\n" in (tmp_path / "task.py").read_text()
    assert run("check", "--no-cache", str(tmp_path / "task.py"))[0] == 0


def test_exclude_and_per_file_ignores_on_the_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("app", "legacy", "gen"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "pay.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    assert findings_of("--extend-exclude", "gen", "--per-file-ignores", "legacy/*:IDM0") == [
        ("app/pay.py", 8, "IDM001")
    ]
    code, _, err = run("check", "--per-file-ignores", "legacy")
    assert code == 2 and "expected PATTERN:CODES" in err


def test_the_readme_gitlab_snippet_writes_a_valid_code_quality_report(
    nested: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shlex

    import jsonschema
    import yaml

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    block = next(b.split("```")[0] for b in readme.split("```yaml\n")[1:] if "codequality" in b)
    job = yaml.safe_load(block)["idemlint"]
    command = next(line for line in job["script"] if line.startswith("idemlint "))
    report = job["artifacts"]["reports"]["codequality"]
    monkeypatch.chdir(nested)
    code, _, err = run(*shlex.split(command)[1:], "--no-cache")
    assert code == 0, err
    issues = json.loads((nested / report).read_text())
    schema = json.loads((Path(__file__).parent / "data" / "gitlab-codequality-schema.json").read_text())
    jsonschema.validate(issues, schema)
    assert [(i["check_name"], i["location"]["path"]) for i in issues] == [("IDM001", "app/pay.py")]


def test_baseline_summary_and_update(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.py").write_text(BUGGY)
    (tmp_path / "b.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    assert run("check", "--no-cache", "--write-baseline", "base.json")[0] == 0
    (tmp_path / "b.py").write_text("x = 1\n")
    code, _, err = run("check", "--no-cache", "--baseline", "base.json")
    assert code == 0 and "1 finding hidden by the baseline, 1 stale entry (`--update-baseline` drops them)" in err
    assert run("check", "--no-cache", "--baseline", "base.json", "--update-baseline")[0] == 0
    assert len(json.loads((tmp_path / "base.json").read_text())["findings"]) == 1
    code, _, err = run("check", "--no-cache", "--baseline", "base.json")
    assert "1 finding hidden by the baseline, 0 stale entries" in err
    assert run("check", "--update-baseline")[0] == 2


@pytest.mark.parametrize(
    ("name", "text"),
    [
        (".idemlint.toml", "ignore = ['IDM001']\n"),
        ("idemlint.toml", "ignore = ['IDM001']\n"),
        ("setup.cfg", "[flake8]\nidemlint-ignore = IDM001\n"),
        (".flake8", "[flake8]\nidemlint_ignore =\n    IDM001\n"),
    ],
)
def test_standalone_and_flake8_configuration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, text: str
) -> None:
    (tmp_path / "pay.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    assert findings_of() == [("pay.py", 8, "IDM001")]
    (tmp_path / name).write_text(text)
    assert findings_of() == []
    code, out, _ = run("check", "--show-settings")
    assert f"configuration: {tmp_path / name}" in out


def test_conflicting_options_are_refused(tmp_path: Path) -> None:
    (tmp_path / "pay.py").write_text(BUGGY)
    for args, reason in (
        (("--fix-only", "--diff"), "--fix-only applies fixes and --diff writes none"),
        (("--stdin-filename", "x.py"), "standard input is checked alone"),
        (("--output-format", "yaml"), "Invalid value for '--output-format'"),
    ):
        code, _, err = run("check", *args, str(tmp_path / "pay.py"))
        assert code == 2 and reason in err, (args, err)


def test_force_color(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from idemlint import console

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert console.colour("auto") is True


def test_progress_shows_after_a_second_and_clears(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from idemlint import console

    clock = iter([100.0, 100.2, 101.5, 101.55, 102.0, 102.1])
    show = console.progress_bar(lambda: next(clock))  # started at 100.0
    show(1, 10)  # 0.2 s: too early to bother
    show(4, 10)  # 1.5 s: shown
    show(5, 10)  # 50 ms later: throttled
    show(10, 10)  # done: shown
    show(-1, -1)
    err = capsys.readouterr().err
    assert err == "\rchecked 4/10 files (2 s)\rchecked 10/10 files (2 s)\r\x1b[2K"


def test_update_baseline_keeps_entries_the_run_did_not_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    for name in ("a.py", "b.py", "c.py"):
        (tmp_path / name).write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    assert run("check", "--no-cache", "--write-baseline", "base.json")[0] == 0
    (tmp_path / "b.py").write_text("x = 1\n")
    # a run on a.py and b.py only, with IDM0 selected: c.py's entry is out of its scope
    code, _, err = run(
        "check", "--no-cache", "--select", "IDM0", "--baseline", "base.json", "--update-baseline", "a.py", "b.py"
    )
    assert code == 0 and "dropped 1 stale entry from base.json" in err
    entries = json.loads((tmp_path / "base.json").read_text())["findings"]
    assert sorted((e["path"], e["code"]) for e in entries) == [("a.py", "IDM001"), ("c.py", "IDM001")]


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("--add-noqa", "--diff"), "--add-noqa rewrites files on its own"),
        (("--show-fixes",), "--show-fixes and --exit-non-zero-on-fix go with --fix"),
        (("--exit-non-zero-on-fix",), "--show-fixes and --exit-non-zero-on-fix go with --fix"),
        (("--update-baseline", "--baseline", "b.json", "--write-baseline", "c.json"), "--update-baseline needs"),
    ],
)
def test_options_that_would_be_ignored_together_are_refused(tmp_path: Path, args: tuple[str, ...], reason: str) -> None:
    (tmp_path / "pay.py").write_text(BUGGY)
    code, _, err = run("check", *args, str(tmp_path / "pay.py"))
    assert code == 2 and err.startswith("idemlint: ") and reason in err and len(err.strip().splitlines()) == 1


def test_stdin_follows_the_selection_and_confidence_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)

    def check(*args: str) -> tuple[int, str]:
        result = CliRunner().invoke(cli, ["check", "-", "--stdin-filename", "app/pay.py", *args], input=BUGGY)
        return result.exit_code, result.stdout

    assert check("--extend-ignore", "IDM001") == (0, "")
    assert check("--min-confidence", "high", "--output-format", "concise")[1].startswith("app/pay.py:8:15: IDM001")
    assert check("--exit-zero")[0] == 0
    code, _, err = run("check", "-", "--stdin-filename", "x.py", "--diff")
    assert code == 2 and "with standard input" in err


def test_add_noqa_counts_lines_as_python_does() -> None:
    from idemlint.suppression import add_noqa

    text = "a = 1  # \x0c b = 2\r\nkey = f()\n"  # a form feed is not a line break for Python
    assert add_noqa(text, {2: {"IDM001"}}) == ("a = 1  # \x0c b = 2\r\nkey = f()  # noqa: IDM001\n", 1, [])


def test_an_unreadable_path_reads_the_same_walked_or_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 26: one style for paths that cannot be read, whichever way they were reached:
    the path as findings show it, and why; a name from the repository (pre-commit passes
    them) is printed as printable text, never as the control characters it holds."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pay.py").write_text(BUGGY)
    (tmp_path / "pkg" / "gone.py").symlink_to(tmp_path / "nowhere.py")
    hostile = "pkg/\x1b[2Jgone\n.py"
    (tmp_path / hostile).symlink_to(tmp_path / "nowhere.py")
    monkeypatch.chdir(tmp_path)
    code, out, walked = run("check", "--format", "concise", "--no-cache", "pkg")
    assert (code, out.splitlines()[0].split(":")[0]) == (1, "pkg/pay.py")
    assert "idemlint: warning: pkg/gone.py: skipped: a broken symbolic link" in walked.splitlines()
    code, out, named = run("check", "--format", "concise", "--no-cache", "pkg/gone.py", "pkg/pay.py", hostile)
    assert code == 2 and out.splitlines()[0].startswith("pkg/pay.py:")
    lines = named.splitlines()
    assert lines[0] == "idemlint: pkg/gone.py: cannot read: a broken symbolic link"
    assert lines[1].startswith("idemlint: pkg/") and lines[1].endswith(
        "gone\\x0a.py: cannot read: a broken symbolic link"
    )
    assert "\x1b" not in named and len(lines) == 2
