"""Fixture projects: bugs behind helpers in other modules, found through the project index.

Each folder under tests/projects is a small project (flat and src layouts) whose files carry
the same `# expect:` / `# ok:` annotations as tests/fixtures; the whole project is checked by
the real CLI, and the findings must be exactly the annotated ones, with their message parts.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.cli import cli

from expectations import parse_fixture

PROJECTS = Path(__file__).parent / "projects"


def _copy(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / name
    shutil.copytree(PROJECTS / name, copy)
    monkeypatch.chdir(copy)
    return copy


@pytest.fixture(params=sorted(p.name for p in PROJECTS.iterdir() if p.is_dir()))
def project(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _copy(request.param, tmp_path, monkeypatch)


@pytest.fixture
def flat(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _copy("flat", tmp_path, monkeypatch)


def check(*args: str) -> list[dict[str, object]]:
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--exit-zero", "--min-confidence", "low", *args])
    assert result.exit_code == 0, result.output
    findings: list[dict[str, object]] = json.loads(result.stdout)
    return findings


def expectations(root: Path) -> dict[str, list]:  # type: ignore[type-arg]
    return {
        path.relative_to(root).as_posix(): parse_fixture(path).expectations
        for path in sorted(root.rglob("*.py"))
        if parse_fixture(path).expectations
    }


def test_findings_through_other_modules_match_the_annotations(project: Path) -> None:
    found = check("--no-cache")
    actual = {(f["path"], f["line"], f["code"]) for f in found}
    expected = {
        (path, e.line, e.code) for path, items in expectations(project).items() for e in items if e.kind == "expect"
    }
    assert sorted(actual - expected) == [] and sorted(expected - actual) == []  # type: ignore[type-var]
    messages = {(f["path"], f["line"], f["code"]): str(f["message"]) for f in found}
    for path, items in expectations(project).items():
        for e in items:
            if e.kind == "expect" and e.message is not None:
                assert e.message in messages[(path, e.line, e.code)], messages[(path, e.line, e.code)]


def test_a_one_file_run_gives_that_file_the_same_findings(project: Path) -> None:
    whole = check("--no-cache")
    for path in expectations(project):
        alone = check("--no-cache", path)
        assert alone == [f for f in whole if f["path"] == path]


def test_findings_name_the_chain_as_related_locations(flat: Path) -> None:
    found = {(f["path"], f["line"]): f for f in check("--no-cache")}
    assert found[("shop/services/base.py", 20)]["related"] == [
        {"path": "shop/services/base.py", "line": 14, "message": "_attempt() calls ApiClient.post()"},
        {"path": "shop/payments/client.py", "line": 15, "message": "ApiClient.post() calls uuid.uuid4()"},
    ]


def test_editing_a_helper_in_another_module_rechecks_its_callers(flat: Path) -> None:
    before = {(f["path"], f["line"], f["code"]) for f in check()}
    assert ("shop/services/notifications.py", 13, "IDM301") in before
    client = flat / "shop" / "payments" / "client.py"
    client.write_text(
        client.read_text().replace(
            "return requests.post(url, json=payload, timeout=5)  # ok: IDM301 not retried here",
            "return requests.put(url, json=payload, timeout=5)",
        )
    )
    after = {(f["path"], f["line"], f["code"]) for f in check()}
    assert before - after == {
        ("shop/services/notifications.py", 13, "IDM301"),
        ("shop/services/notifications.py", 18, "IDM301"),
    }
    assert after - before == set()


def test_a_task_only_a_schedule_starts_waits_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A fixed countdown in a task only the beat schedule starts is `low`, with its own
    evidence; the twins, also queued by a view or handed on under another name, keep the
    rule's confidence. Once a view queues the first as well, the next (cached) run raises it back."""
    project = _copy("periodic_tasks", tmp_path, monkeypatch)

    def jitter_findings() -> set[tuple[int, str, object]]:
        return {(int(str(f["line"])), str(f["confidence"]), f["evidence"]) for f in check() if f["code"] == "IDM202"}

    assert jitter_findings() == {
        (16, "low", "a task only a periodic schedule starts"),
        (24, "medium", "in the function"),
        (32, "medium", "in the function"),
    }
    views = project / "shop" / "views.py"
    views.write_text(
        views.read_text()
        .replace("send_receipts.delay(order.id)", "send_receipts.delay(order.id)\n    sync_stock.delay()")
        .replace("import send_receipts", "import send_receipts, sync_stock")
    )
    assert jitter_findings() == {
        (16, "medium", "in the function"),
        (24, "medium", "in the function"),
        (32, "medium", "in the function"),
    }


def test_findings_in_code_nothing_names_say_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = _copy("unreached", tmp_path, monkeypatch)
    note = "nothing in this project calls or names"
    found = [f for f in check() if f["path"] == "shop/gateway.py"]
    noted = {f["line"] for f in found if note in str(f["message"])}
    lines = {e.line for e in expectations(project)["shop/gateway.py"] if note in (e.message or "")}
    assert noted == lines and len(noted) == 6
    # the note is all: the confidence and the role are those of a finding in called code
    assert {(f["confidence"], f["role"]) for f in found if f["code"] == "IDM301"} == {("low", "source")}
    # once a view calls the method, it is reached: the next (cached) run says nothing of it
    views = project / "shop" / "views.py"
    views.write_text(views.read_text() + "\n\ndef refund(order):\n    return Gateway()._refund(order)\n")
    again = [f for f in check() if f["path"] == "shop/gateway.py"]
    assert {f["line"] for f in again if note in str(f["message"])} == noted - {
        e.line for e in expectations(project)["shop/gateway.py"] if "names _refund" in (e.message or "")
    }


def test_a_new_function_nothing_calls_rechecks_only_its_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What nothing names is kept by name, as the functions' digests are: a new def re-checks
    its own file, and a call of an unreached method added elsewhere re-checks its definer too."""
    from idemlint import api
    from idemlint.rules import ALL_RULES

    project = _copy("unreached", tmp_path, monkeypatch)
    config = api.load_config(["."], None)

    def run() -> tuple[int, int]:
        found = api.discover_files(["."], config)
        index = api.build_project_index(config, ALL_RULES, found, ["."], cache=True)
        result = api.check_files(found, config, ALL_RULES, index, jobs=1)
        return result.cached, len(found.to_check(config.check_tests))

    run()
    cached, files = run()
    assert cached == files
    settings = project / "shop" / "settings.py"
    settings.write_text(settings.read_text() + "\n\ndef another_helper():\n    return None\n")
    assert run()[0] == files - 1
    views = project / "shop" / "views.py"
    views.write_text(views.read_text() + "\n\ndef refund(order):\n    return Gateway()._refund(order)\n")
    assert run()[0] == files - 2  # the view, and gateway.py, whose _refund is reached now


def test_the_index_digest_does_not_depend_on_the_hash_seed() -> None:
    # the digest is part of every cache key: if it changed between processes, no run would hit
    import os
    import subprocess
    import sys

    script = (
        "from pathlib import Path; from idemlint.analysis.project import build_index; from idemlint.config import Config; "
        f"r = Path({str(PROJECTS / 'flat')!r}); print(build_index(sorted(r.rglob('*.py')), r, Config()).digest)"
    )
    digests = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(digests) == 1


def test_source_roots_come_from_the_src_setting(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """As ruff's `src`: packages under `lib/python` are named from there, so the index follows
    the same calls as in the `src` layout. Without it, a package is named as Python finds it,
    from the top of its `__init__.py` files; a namespace package (none at its top) needs it."""
    copy = _copy("src_layout", tmp_path, monkeypatch)
    (copy / "lib").mkdir()
    shutil.move(str(copy / "src"), str(copy / "lib" / "python"))
    (copy / "pyproject.toml").write_text('[tool.idemlint]\nsrc = ["lib/python"]\n')
    tasks = copy / "lib" / "python" / "billing" / "tasks" / "refunds.py"  # an absolute import this time
    tasks.write_text(tasks.read_text().replace("from ..clients.psp import", "from billing.clients.psp import"))
    found = {(f["path"], f["line"], f["code"]) for f in check("--no-cache")}
    expected = {
        (f"lib/python/{path.removeprefix('src/')}", e.line, e.code)
        for path, items in expectations(PROJECTS / "src_layout").items()
        for e in items
        if e.kind == "expect"
    }
    assert found == expected and expected
    (copy / "pyproject.toml").write_text("[tool.idemlint]\n")
    assert {(f["path"], f["line"], f["code"]) for f in check("--no-cache")} == expected
    (copy / "lib" / "python" / "billing" / "__init__.py").unlink()  # `billing` a namespace package
    assert {(f["path"], f["line"], f["code"]) for f in check("--no-cache")} == set()


def test_editing_a_helper_rechecks_the_files_that_name_it_and_nothing_else(flat: Path) -> None:
    """Each cached result keys on the project functions its file names: editing what
    `notify()` does re-checks the files that call it, and every other file stays cached."""
    from idemlint import api
    from idemlint.rules import ALL_RULES

    config = api.load_config(["."], None)

    digests: list[dict[str, str]] = []

    def run() -> tuple[int, int]:
        found = api.discover_files(["."], config)
        project = api.build_project_index(config, ALL_RULES, found, ["."], cache=True)
        digests.append(project.function_digests)
        result = api.check_files(found, config, ALL_RULES, project, jobs=1)
        return result.cached, len(found.to_check(config.check_tests))

    cold_cached, files = run()
    assert cold_cached == 0
    assert run() == (files, files)  # warm: every file from the cache
    client = flat / "shop" / "payments" / "client.py"
    text = client.read_text()
    client.write_text(text.replace("json=payload, timeout=5)  # ok", "json=payload, timeout=9)  # ok"))
    assert run()[0] == files - 1  # only the edited file: what notify() does is unchanged
    client.write_text(
        text.replace("requests.post(url, json=payload, timeout=5)", "requests.put(url, json=payload, timeout=5)")
    )
    cached, _ = run()
    changed = {name for name, digest in digests[-1].items() if digests[-2].get(name) != digest}
    assert "notify" in changed
    naming = [p for p in flat.rglob("*.py") if changed & set(re.findall(r"\w+", p.read_text())) or p == client]
    assert files - cached == len(naming) and 1 < len(naming) < files


def test_editing_a_helper_rechecks_callers_that_call_it_by_a_re_exported_name(flat: Path) -> None:
    """`take_order()` runs `claim()`, which `shop/orders/__init__.py` re-exports under that name:
    the caller's cached result depends on `claim`, so a warm run sees the helper change."""

    def dropped() -> list[tuple[object, object]]:
        return [
            (f["path"], f["line"]) for f in check() if f["code"] == "IDM102" and f["path"] == "shop/orders/taking.py"
        ]

    assert dropped() == [("shop/orders/taking.py", 5)]
    claims = flat / "shop" / "orders" / "claims.py"
    claims.write_text(claims.read_text().replace(', status="pending"', ""))  # no longer conditional
    assert dropped() == []
