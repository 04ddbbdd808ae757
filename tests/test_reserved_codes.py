"""IDM800 and IDM900, the codes idemlint reports itself: documented in full, from one source."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.cli import cli
from idemlint.explain import render
from idemlint.finding import Finding
from idemlint.output.text import format_text
from idemlint.registry import RESERVED, RESERVED_CODES, rule_by_code_or_name

ROOT = Path(__file__).resolve().parent.parent


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def flat(text: str) -> str:
    return " ".join(text.split())


SECTIONS = ("## What it does", "## Why is this bad?", "## How to fix it", "## Fix safety")


def test_explain_idm900_gives_its_limits_pre_filter_and_switches() -> None:
    code, out, _ = run("explain", "IDM900")
    assert code == 0 and out.startswith("# IDM900 parse-error\n")
    for heading in (*SECTIONS, "## Limits", "## Files that are not parsed", "## Turning it off"):
        assert heading in out
    text = flat(out)
    for fact in (
        "over 8 MB",
        "more than 100 brackets deep",
        "more than 1,000 operators",
        "after 60 s",
        "none of the trigger words",
        "a syntax error there is not reported",
        "`--ignore IDM900`",
        '`ignore = ["IDM900"]`',
        "`--select` never hides it",
        "Severity: error.",
    ):
        assert fact in text, fact
    assert run("explain", "parse-error")[1] == out


def test_explain_idm800_says_what_it_flags_and_that_it_is_cli_only() -> None:
    code, out, _ = run("explain", "idm800")
    assert code == 0 and out.startswith("# IDM800 unused-suppression\n")
    for heading in (*SECTIONS, "## When it is reported"):
        assert heading in out
    text = flat(out)
    for fact in (
        "`# noqa: IDM001`",
        "reports nothing on the comment's line",
        "CLI-only",
        "flake8",
        "`--ignore IDM800`",
    ):
        assert fact in text, fact
    assert run("explain", "unused-suppression")[1] == out


@pytest.mark.parametrize("code", sorted(RESERVED_CODES))
def test_the_rules_page_has_the_same_full_section(code: str) -> None:
    doc = RESERVED_CODES[code]
    page = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    heading = f"## {code} {doc.name}\n"
    assert heading in page
    section = page.split(heading, 1)[1].split("\n## ", 1)[0]
    explained = render(doc).split("\n", 1)[1].replace("\n## ", "\n### ")
    assert section.strip() == explained.strip()
    assert f"| [{code}](#{code.lower()}-{doc.name}) | {doc.name} | {doc.summary} |" in page


@pytest.mark.parametrize("code", sorted(RESERVED_CODES))
def test_one_source_for_the_reserved_texts(code: str) -> None:
    doc = RESERVED_CODES[code]
    assert RESERVED[code] == (doc.name, doc.summary)
    assert rule_by_code_or_name(code) is doc and rule_by_code_or_name(doc.name) is doc
    listed = [line for line in run("rules")[1].splitlines() if line.startswith(code)]
    assert len(listed) == 1 and listed[0].split(None, 2)[2] == doc.summary
    for module in ("explain.py", "output/text.py", "output/sarif.py"):
        source = (ROOT / "idemlint" / module).read_text(encoding="utf-8")
        assert f'"{code}"' not in source and doc.summary not in source, module  # read, not restated


def test_text_report_states_the_severity_of_reserved_findings() -> None:
    finding = Finding("a.py", 2, 1, "IDM900", 2, 1, "parse-error", "syntax error: boom", "Fix the file.")
    assert format_text([finding], False).splitlines() == [
        "a.py:2:1: IDM900 syntax error: boom",
        "    help: Fix the file.",
        "    (error; `idemlint explain IDM900`)",
    ]
