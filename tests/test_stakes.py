"""Stakes apart from confidence, and a default view that shows what was measured precise
(issue 30): what each finding puts at stake, `--min-stakes`, the config keys, the text order."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint import calibration
from idemlint.cli import cli

from conftest import SLEEP_IN_LOOP, lint

# A status flip with no precondition, in a function that calls nothing outside: stored state.
TICKET_REOPENED = """\
from tracker.models import Ticket


def reopen(ticket_id):
    Ticket.objects.filter(pk=ticket_id).update(status="open")
"""
# The same write on a record named for money: a refund resurrected.
REFUND_REOPENED = TICKET_REOPENED.replace("tracker", "billing").replace("Ticket", "Refund").replace("ticket", "refund")
# The same write on a ticket, in a function that then calls another system.
TICKET_REOPENED_AND_POSTED = (
    TICKET_REOPENED.replace("from tracker", "import requests\nfrom tracker")
    + '    requests.post("https://hooks.example.com/reopened", json={"id": ticket_id})\n'
)


def stakes_of(source: str, code: str) -> list[str]:
    return [f.stakes for f in lint(source).findings if f.code == code]


def test_a_state_write_is_stored_state_unless_it_names_money_or_calls_out() -> None:
    assert stakes_of(TICKET_REOPENED, "IDM103") == ["state"]
    assert stakes_of(REFUND_REOPENED, "IDM103") == ["external"]
    assert stakes_of(TICKET_REOPENED_AND_POSTED, "IDM103") == ["external"]


def test_a_missing_jitter_costs_load_and_a_key_guards_an_external_effect() -> None:
    from conftest import KEY_IN_LOOP

    assert stakes_of(SLEEP_IN_LOOP, "IDM202") == ["none"]
    assert stakes_of(KEY_IN_LOOP, "IDM001") == ["external"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, calibration_table: Path) -> Path:
    # the rules' declared confidence, not the shipped measurements: what the formats carry is
    # under test here, and a recalibration must not change it
    calibration_table.write_text(json.dumps({"thresholds": {"high": 0.9, "medium": 0.7}, "rules": {}}))
    (tmp_path / "svc").mkdir()
    (tmp_path / "svc" / "tickets.py").write_text(TICKET_REOPENED)
    (tmp_path / "svc" / "refunds.py").write_text(REFUND_REOPENED)
    (tmp_path / "svc" / "fetch.py").write_text(SLEEP_IN_LOOP)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--min-confidence", "low", *args])
    return result.exit_code, result.stdout


def test_min_stakes_hides_what_matters_less_and_says_so(project: Path) -> None:
    code, out = check("--format", "json", "svc")
    assert sorted((d["path"], d["code"], d["stakes"]) for d in json.loads(out)) == [
        ("svc/fetch.py", "IDM202", "none"),
        ("svc/refunds.py", "IDM103", "external"),
        ("svc/tickets.py", "IDM103", "state"),
    ]
    code, out = check("--format", "json", "--min-stakes", "state", "svc")
    assert sorted(d["path"] for d in json.loads(out)) == ["svc/refunds.py", "svc/tickets.py"]
    code, out = check("--min-stakes", "external", "svc")
    assert code == 1
    assert out.splitlines()[0].startswith("svc/refunds.py:5:5: IDM103 ")
    assert out.endswith(
        "Found 1 finding in 3 files checked; 2 hidden as less sure or less at stake "
        "(`--min-confidence low --min-stakes none` shows them).\n"
    )


def test_the_text_report_lists_the_most_at_stake_first(project: Path) -> None:
    _, out = check("svc")
    headlines = [line.split(" ")[0] for line in out.splitlines() if line.startswith("svc/")]
    assert headlines == ["svc/refunds.py:5:5:", "svc/tickets.py:5:5:", "svc/fetch.py:11:13:"]
    assert "(error, medium confidence, at stake: money or an external effect; `idemlint explain IDM103`)" in out
    assert "at stake: stored state;" in out and "at stake: load or latency only;" in out


def test_min_stakes_and_min_confidence_are_configuration_keys(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.idemlint]\nmin-stakes = "external"\nmin-confidence = "low"\n')
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", "svc"])
    assert [d["path"] for d in json.loads(result.stdout)] == ["svc/refunds.py"]
    # the command line wins over the configuration
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--format", "json", "--min-stakes", "none", "svc"])
    assert len(json.loads(result.stdout)) == 3


def test_a_bad_stakes_value_in_the_configuration_is_one_line_and_exit_2(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.idemlint]\nmin-stakes = "money"\n')
    result = CliRunner().invoke(cli, ["check", "svc"])
    assert result.exit_code == 2
    assert result.stderr.strip().splitlines() == [
        f"idemlint: {project / 'pyproject.toml'}: [tool.idemlint] min-stakes must be one of "
        "'none', 'state', 'external', got 'money'"
    ]


def test_the_default_view_keeps_high_and_medium_kinds_measured_precise(calibration_table: Path) -> None:
    calibration_table.write_text(
        json.dumps(
            {
                "prior_weight": 5,
                "rules": {
                    "IDM101": {
                        "*|*": {"judged": 40, "true": 35},  # (35 + 5 * 0.8) / 45 = 0.867
                        "read in the function|source": {"judged": 20, "true": 19},  # 0.933: shown
                        "read by a helper|source": {"judged": 20, "true": 16},  # 0.813: hidden
                    }
                },
            }
        )
    )
    assert calibration.shown_by_default("IDM101", "read in the function", "source", "medium")
    assert not calibration.shown_by_default("IDM101", "read by a helper", "source", "medium")
    assert calibration.shown_by_default("IDM101", "read by a helper", "source", "high")
    assert not calibration.shown_by_default("IDM101", "read in the function", "source", "low")
    # a rule never judged: only what it declares high is shown
    assert calibration.shown_by_default("IDM003", "in the function", "source", "high")
    assert not calibration.shown_by_default("IDM003", "in the function", "source", "medium")


def test_flake8_shows_the_default_view_and_takes_the_same_options(tmp_path: Path) -> None:
    import subprocess
    import sys

    path = tmp_path / "svc.py"
    path.write_text(textwrap.dedent(TICKET_REOPENED))
    base = [sys.executable, "-m", "flake8", "--isolated", "--select=IDM", "--format=%(row)d:%(code)s"]
    default = subprocess.run([*base, str(path)], capture_output=True, text=True)
    everything = subprocess.run([*base, "--idemlint-min-confidence=low", str(path)], capture_output=True, text=True)
    at_stake = subprocess.run(
        [*base, "--idemlint-min-confidence=low", "--idemlint-min-stakes=external", str(path)],
        capture_output=True,
        text=True,
    )
    assert (default.stdout, everything.stdout, at_stake.stdout) == ("", "5:IDM103\n", "")


def test_every_ci_format_carries_confidence_and_stakes(project: Path) -> None:
    sarif = json.loads(check("--format", "sarif", "--min-stakes", "external", "svc")[1])
    (result,) = sarif["runs"][0]["results"]
    assert (result["ruleId"], result["properties"]["stakes"], result["properties"]["confidence"]) == (
        "IDM103",
        "external",
        "medium",
    )
    github = check("--format", "github", "--min-stakes", "external", "svc")[1]
    assert "(medium confidence, in the function; at stake: money or an external effect). Put the precondition" in github
    gitlab = json.loads(check("--format", "gitlab", "svc")[1])
    assert sorted((i["check_name"], i["severity"]) for i in gitlab) == [
        ("IDM103", "major"),  # medium, and money at stake
        ("IDM103", "minor"),  # medium, stored state only
        ("IDM202", "minor"),  # a warning
    ]
    junit = check("--format", "junit", "--min-stakes", "external", "svc")[1]
    assert "(medium confidence, in the function; at stake: money or an external effect)" in junit
