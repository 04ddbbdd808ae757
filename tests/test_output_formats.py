"""The concise, pylint, GitLab Code Quality and JUnit XML reports: exact output for known findings,
GitLab's report checked against its documented format, JUnit parsed as XML."""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from idemlint.finding import Finding
from idemlint.output import FORMATS, ReportContext, get_formatter
from idemlint.output.concise import format_concise
from idemlint.output.gitlab import format_gitlab
from idemlint.output.junit import format_junit
from idemlint.output.pylint import format_pylint
from idemlint.output.text import format_text

# Transcribed from GitLab's "Code Quality report format" documentation (see its $comment).
GITLAB_SCHEMA = json.loads((Path(__file__).parent / "data" / "gitlab-codequality-schema.json").read_text())

FINDINGS = [
    Finding(
        path="svc/pay.py",
        line=10,
        col=20,
        code="IDM001",
        end_line=10,
        end_col=45,
        name="key-regenerated-per-attempt",
        message="Idempotency key `uuid.uuid4()` is regenerated on every attempt",
        suggestion="create the key once, before the retry loop",
        severity="error",
        confidence="high",
        fingerprint="0f1e2d3c4b5a69788796",
    ),
    Finding(
        path="svc/pay.py",
        line=12,
        col=13,
        code="IDM202",
        end_line=12,
        end_col=34,
        name="retry-without-jitter",
        message="`time.sleep(2 ** attempt)` backs off without jitter",
        suggestion="add a random component: `time.sleep(2 ** attempt + random.random())`",
        severity="warning",
        confidence="medium",
        fingerprint="a5b4c3d2e1f009182736",
    ),
    Finding(
        path="svc/orders.py",
        line=7,
        col=5,
        code="IDM101",
        end_line=7,
        end_col=30,
        name="read-decide-write",
        message='`if order.status != "paid"` & the write race',
        suggestion="lock the row: `select_for_update()` <or> a conditional UPDATE",
        severity="error",
        confidence="medium",
        fingerprint="5566778899aabbccddee",
    ),
]


def twice(first_line: int) -> list[Finding]:
    """Two findings on identical lines of one function: the engine gives them one fingerprint."""
    return [
        Finding(
            "svc/twice.py",
            line,
            13,
            "IDM001",
            line,
            30,
            "key-regenerated-per-attempt",
            "Idempotency key `uuid.uuid4()` is regenerated on every attempt",
            "create the key once, before the retry loop",
            fingerprint="f00df00df00df00df00d",
        )
        for line in (first_line, first_line + 1)
    ]


def gitlab_fingerprints(findings: list[Finding]) -> list[str]:
    return [issue["fingerprint"] for issue in json.loads(format_gitlab(findings, False))]


def test_every_format_is_registered() -> None:
    assert {"concise", "gitlab", "junit", "pylint"} <= set(FORMATS)
    for name in FORMATS:
        assert callable(get_formatter(name))
    assert get_formatter("concise") is format_concise
    assert get_formatter("gitlab") is format_gitlab
    assert get_formatter("junit") is format_junit
    assert get_formatter("pylint") is format_pylint
    with pytest.raises(KeyError):
        get_formatter("codeclimate")


def test_concise_is_one_line_per_finding() -> None:
    assert format_concise(FINDINGS, False) == (
        "svc/pay.py:10:20: IDM001 Idempotency key `uuid.uuid4()` is regenerated on every attempt\n"
        "svc/pay.py:12:13: IDM202 `time.sleep(2 ** attempt)` backs off without jitter\n"
        'svc/orders.py:7:5: IDM101 `if order.status != "paid"` & the write race\n'
    )
    assert format_concise([], False) == ""


def test_concise_colours_like_the_text_report() -> None:
    coloured = format_concise(FINDINGS, True)
    assert coloured == (
        "\x1b[1msvc/pay.py:10:20:\x1b[0m \x1b[1;31mIDM001\x1b[0m"
        " Idempotency key `uuid.uuid4()` is regenerated on every attempt\n"
        "\x1b[1msvc/pay.py:12:13:\x1b[0m \x1b[1;33mIDM202\x1b[0m `time.sleep(2 ** attempt)` backs off without jitter\n"
        '\x1b[1msvc/orders.py:7:5:\x1b[0m \x1b[1;31mIDM101\x1b[0m `if order.status != "paid"` & the write race\n'
    )
    # Each line is the text report's first line for that finding (three lines per finding there).
    assert coloured.splitlines() == format_text(FINDINGS, True).splitlines()[::3]


def test_pylint_is_ruffs_pylint_format() -> None:
    assert format_pylint(FINDINGS, True) == (
        "svc/pay.py:10: [IDM001] Idempotency key `uuid.uuid4()` is regenerated on every attempt\n"
        "svc/pay.py:12: [IDM202] `time.sleep(2 ** attempt)` backs off without jitter\n"
        'svc/orders.py:7: [IDM101] `if order.status != "paid"` & the write race\n'
    )
    assert format_pylint([], False) == ""


def test_gitlab_report_exact() -> None:
    # Pinned: GitLab matches issues across pipelines by fingerprint, so a change to how it is
    # made reports every existing issue as fixed and again as new.
    assert json.loads(format_gitlab(FINDINGS, False)) == [
        {
            "description": "IDM001 Idempotency key `uuid.uuid4()` is regenerated on every attempt",
            "check_name": "IDM001",
            "fingerprint": "e3aa01bf0e0c08fc4d602f15ee693760f6f132c9b50648803bb528197fcffb5e",
            "severity": "critical",
            "location": {"path": "svc/pay.py", "lines": {"begin": 10}},
        },
        {
            "description": "IDM202 `time.sleep(2 ** attempt)` backs off without jitter",
            "check_name": "IDM202",
            "fingerprint": "c46bc6d42702301b18c074138e290f265efcc0ed6cab5e89069b9e658d15a24b",
            "severity": "minor",
            "location": {"path": "svc/pay.py", "lines": {"begin": 12}},
        },
        {
            "description": 'IDM101 `if order.status != "paid"` & the write race',
            "check_name": "IDM101",
            "fingerprint": "ae5e8859592cc5cf3e47c2e34a9648068c55e4b1d142a59e900391dfc3a5a524",
            "severity": "major",
            "location": {"path": "svc/orders.py", "lines": {"begin": 7}},
        },
    ]
    # The hash of the code, the path and the occurrence fingerprint SARIF also reports.
    basis = "IDM001\0svc/pay.py\0" + "0f1e2d3c4b5a69788796:1"
    assert gitlab_fingerprints(FINDINGS)[0] == hashlib.sha256(basis.encode()).hexdigest()
    assert format_gitlab([], False) == "[]\n"


def test_gitlab_report_follows_the_documented_format() -> None:
    jsonschema.Draft7Validator.check_schema(GITLAB_SCHEMA)
    engine_findings = [  # IDM900 and IDM800 carry no engine fingerprint
        replace(FINDINGS[0], code="IDM900", name="parse-error", fingerprint=""),
        replace(FINDINGS[2], code="IDM800", name="unused-suppression", fingerprint=""),
    ]
    findings = FINDINGS + twice(20) + engine_findings
    report = format_gitlab(findings, False)
    assert not report.startswith("\ufeff")  # GitLab's parser rejects a byte order mark
    issues = json.loads(report)
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert len({issue["fingerprint"] for issue in issues}) == len(findings)


def test_gitlab_schema_accepts_positions_instead_of_lines() -> None:
    issue = json.loads(format_gitlab(FINDINGS[:1], False))[0]
    issue["location"] = {"path": "svc/pay.py", "positions": {"begin": {"line": 10, "column": 20}}}
    jsonschema.validate([issue], GITLAB_SCHEMA)


@pytest.mark.parametrize(
    "change",
    [
        {"check_name": None},  # a required field missing
        {"severity": "error"},  # not on GitLab's scale
        {"location": {"path": "svc/pay.py"}},  # no line
        {"location": {"path": "/abs/svc/pay.py", "lines": {"begin": 10}}},  # not relative
        {"location": {"path": "svc/pay.py", "lines": {"begin": "10"}}},  # not an integer
    ],
)
def test_gitlab_schema_rejects_what_the_documentation_rules_out(change: dict[str, object]) -> None:
    issue = json.loads(format_gitlab(FINDINGS[:1], False))[0]
    issue.update(change)
    issue = {key: value for key, value in issue.items() if value is not None}
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([issue], GITLAB_SCHEMA)


def test_gitlab_severity_ranks_errors_by_confidence() -> None:
    def severity(severity: str, confidence: str) -> str:
        finding = replace(FINDINGS[0], severity=severity, confidence=confidence)
        return str(json.loads(format_gitlab([finding], False))[0]["severity"])

    assert [severity("error", c) for c in ("high", "medium", "low")] == ["critical", "major", "minor"]
    assert [severity("warning", c) for c in ("high", "medium", "low")] == ["minor", "minor", "minor"]


def test_gitlab_fingerprints_differ_on_identical_lines_and_survive_a_shift() -> None:
    first, second = gitlab_fingerprints(twice(20))
    assert first != second
    assert gitlab_fingerprints(twice(23)) == [first, second]
    # Counted in line order, whatever order the findings come in.
    assert gitlab_fingerprints(twice(20)[::-1]) == [second, first]
    # The same engine fingerprint in another file is another issue.
    elsewhere = [replace(f, path="svc/other.py") for f in twice(20)]
    assert not set(gitlab_fingerprints(elsewhere)) & {first, second}


def test_junit_report_exact() -> None:
    assert format_junit(FINDINGS, False) == (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<testsuites name="idemlint" tests="2" failures="2" errors="0">\n'
        '  <testsuite name="idemlint" tests="2" failures="2" errors="0">\n'
        '    <testcase name="svc/pay.py" classname="idemlint" file="svc/pay.py">\n'
        '      <failure message="IDM001 Idempotency key `uuid.uuid4()` is regenerated on every attempt" type="IDM001">'
        "svc/pay.py:10:20: IDM001 Idempotency key `uuid.uuid4()` is regenerated on every attempt\n"
        "    help: create the key once, before the retry loop</failure>\n"
        '      <failure message="IDM202 `time.sleep(2 ** attempt)` backs off without jitter" type="IDM202">'
        "svc/pay.py:12:13: IDM202 `time.sleep(2 ** attempt)` backs off without jitter\n"
        "    help: add a random component: `time.sleep(2 ** attempt + random.random())`</failure>\n"
        "    </testcase>\n"
        '    <testcase name="svc/orders.py" classname="idemlint" file="svc/orders.py">\n'
        '      <failure message="IDM101 `if order.status != &quot;paid&quot;` &amp; the write race" type="IDM101">'
        'svc/orders.py:7:5: IDM101 `if order.status != "paid"` &amp; the write race\n'
        "    help: lock the row: `select_for_update()` &lt;or&gt; a conditional UPDATE</failure>\n"
        "    </testcase>\n"
        "  </testsuite>\n"
        "</testsuites>\n"
    )


def test_junit_parses_with_one_case_per_file_and_one_failure_per_finding() -> None:
    root = ET.fromstring(format_junit(FINDINGS, False))
    (suite,) = root.findall("testsuite")
    assert suite.get("name") == "idemlint"
    cases = suite.findall("testcase")
    assert [case.get("name") for case in cases] == ["svc/pay.py", "svc/orders.py"]
    # As in the JUnit schema: `tests` counts test cases, `failures` the test cases that failed.
    assert suite.get("tests") == suite.get("failures") == str(len(cases)) == "2"
    assert root.get("tests") == root.get("failures") == "2"
    failures = [(f.get("type"), f.get("message"), f.text) for case in cases for f in case.findall("failure")]
    assert len(failures) == len(FINDINGS)
    assert failures[2] == (
        "IDM101",
        'IDM101 `if order.status != "paid"` & the write race',
        'svc/orders.py:7:5: IDM101 `if order.status != "paid"` & the write race\n'
        "    help: lock the row: `select_for_update()` <or> a conditional UPDATE",
    )


def test_junit_without_findings_and_with_characters_xml_cannot_hold() -> None:
    root = ET.fromstring(format_junit([], False))
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.findall("testcase")) == ("0", "0", [])
    odd = replace(FINDINGS[0], message="bell \x07 and\nnewline", suggestion="tab\there")
    (failure,) = ET.fromstring(format_junit([odd], False)).iter("failure")
    assert failure.get("message") == "IDM001 bell \\x07 and\\x0anewline"  # made printable with the finding
    assert failure.text is not None and failure.text.endswith("    help: tab\there")


def test_junit_has_a_passing_case_for_each_checked_file_without_findings() -> None:
    root = ET.fromstring(format_junit(FINDINGS[:1], False, ReportContext(checked=[FINDINGS[0].path, "clean.py"])))
    (suite,) = root.findall("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("2", "1")
    cases = {case.get("name"): len(case.findall("failure")) for case in suite.findall("testcase")}
    assert cases == {FINDINGS[0].path: 1, "clean.py": 0}
