"""Odd and hostile input: each case has one exact, documented outcome, and nothing crashes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.cli import cli
from idemlint.config import Config
from idemlint.engine import check_source
from idemlint.rules import ALL_RULES

from conftest import found, lint

BUGGY = """\
import uuid
import requests


def charge(order):
    for attempt in range(2):
        try:
            return requests.post("https://psp.example", headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=5)
        except requests.ConnectionError:
            pass
"""
BUG = {(8, "IDM001")}
# Words that get a file past the pre-filter, so the parser really sees it.
TRIGGER = "# retry idempotency_key uuid\n"


def codes(source: str | bytes) -> list[tuple[int, str]]:
    result = check_source(source, "odd.py", Config(), ALL_RULES)
    assert result.errors == ()
    return sorted((f.line, f.code) for f in result.findings)


def test_empty_file_and_comment_only_file_are_clean() -> None:
    assert codes("") == []
    assert codes(TRIGGER + "# nothing but comments\n") == []


def test_cr_only_line_endings_keep_line_numbers() -> None:
    assert codes(BUGGY.replace("\n", "\r")) == [(8, "IDM001")]


def test_tabs_and_form_feeds() -> None:
    assert codes(BUGGY.replace("    ", "\t")) == [(8, "IDM001")]
    assert codes(BUGGY.replace("def charge", "\x0cdef charge")) == [(8, "IDM001")]


def test_non_utf8_without_cookie_is_a_parse_error() -> None:
    result = check_source(TRIGGER.encode() + b"name = '\xe9t\xe9'\n", "latin.py", Config(), ALL_RULES)
    assert [(f.line, f.code) for f in result.findings] == [(1, "IDM900")]
    assert "cannot decode" in result.findings[0].message


def test_unknown_coding_cookie_is_a_parse_error() -> None:
    result = check_source(b"# -*- coding: klingon -*-\n" + TRIGGER.encode(), "x.py", Config(), ALL_RULES)
    assert [f.code for f in result.findings] == ["IDM900"]


def test_nul_byte_and_binary_content_are_parse_errors() -> None:
    assert codes(BUGGY + "\x00\n") == [(1, "IDM900")]
    binary = bytes(range(256)) * 40
    assert [f.code for f in check_source(binary, "blob.py", Config(), ALL_RULES).findings] == ["IDM900"]


def test_very_large_file_is_reported_not_analysed() -> None:
    big = TRIGGER + ("x = 'padding padding padding padding padding padding padding padding'\n" * 150_000)
    assert len(big) > 10_000_000
    result = check_source(big, "generated.py", Config(), ALL_RULES)
    assert [(f.line, f.code) for f in result.findings] == [(1, "IDM900")]
    assert "too large" in result.findings[0].message


def test_very_long_line_is_fine() -> None:
    assert codes(BUGGY + "BLOB = '" + "a" * 200_000 + "'\n") == [(8, "IDM001")]


@pytest.mark.parametrize("depth", [200, 300])
def test_deep_nesting_is_reported_not_crashed(depth: int) -> None:
    result = check_source(TRIGGER + "x = " + "(" * depth + "1" + ")" * depth + "\n", "deep.py", Config(), ALL_RULES)
    assert [(f.line, f.code) for f in result.findings] == [(1, "IDM900")]
    assert f"{depth} levels" in result.findings[0].message


def test_twenty_thousand_term_chain_is_reported_quickly() -> None:
    result = check_source(TRIGGER + "x = " + " + ".join(["a"] * 20_000) + "\n", "chain.py", Config(), ALL_RULES)
    assert [(f.line, f.code) for f in result.findings] == [(1, "IDM900")]
    assert "19999 operators" in result.findings[0].message


def test_brackets_and_dashes_in_strings_do_not_count_as_complexity() -> None:
    assert codes(BUGGY + 'BANNER = """' + "-" * 5000 + "(" * 500 + '"""\n') == [(8, "IDM001")]


def test_python_312_syntax_parses() -> None:
    source = (
        BUGGY
        + 'type Alias = list[int]\n\n\ndef first[T](xs: list[T]) -> T:\n    return xs[0]\n\n\nMSG = f"{\'a\' + f"{Alias}"}"\n'
    )
    assert codes(source) == [(8, "IDM001")]


def test_python_2_syntax_is_a_parse_error_with_its_line() -> None:
    assert codes(TRIGGER + "import requests\nprint 'retrying'\n") == [(3, "IDM900")]


def test_source_is_never_executed(tmp_path: Path) -> None:
    marker = tmp_path / "executed"
    source = f"import uuid\nopen({str(marker)!r}, 'w').write('ran')\nidempotency_key = uuid.uuid4()  # retry\n"
    (tmp_path / "side_effect.py").write_text(source)
    CliRunner().invoke(cli, ["check", "--no-cache", str(tmp_path)])
    assert not marker.exists()


def test_directory_symlink_loop_terminates(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "pay.py").write_text(BUGGY)
    os.symlink(tmp_path, tmp_path / "pkg" / "loop")
    result = subprocess.run(
        [sys.executable, "-m", "idemlint", "check", "--no-cache", "-q", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert result.stdout.count(": IDM001 ") == 1


def test_path_that_vanishes_during_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.py").write_text(BUGGY)
    (tmp_path / "b.py").write_text(BUGGY)
    import idemlint.files as files

    real_discover = files.discover

    def discover_then_delete(*args, **kwargs):  # type: ignore[no-untyped-def]
        result = real_discover(*args, **kwargs)
        (tmp_path / "a.py").unlink(missing_ok=True)
        return result

    monkeypatch.setattr(files, "discover", discover_then_delete)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "."])
    assert result.exit_code == 2
    assert "a.py: cannot read" in result.stderr
    assert "b.py:8:" in result.stdout


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[tool.idemlint]\nselect = [\n", "not valid TOML"),
        ("[tool.idemlint]\nper-file-ignores = ['IDM001']\n", "per-file-ignores must map glob patterns"),
        ("[tool.idemlint]\nall-updates-need-count = 'yes'\n", "all-updates-need-count must be true or false"),
        ("[tool.idemlint]\nselct = ['IDM001']\n", "unknown option"),
        ("[tool.idemlint]\nignore = ['IDM7']\n", "unknown rule code or prefix IDM7"),
    ],
)
def test_bad_configuration_names_the_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, toml: str, message: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(toml)
    (tmp_path / "pay.py").write_text(BUGGY)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "."])
    assert result.exit_code == 2
    assert message in result.stderr and "pyproject.toml" in result.stderr


def test_lint_helper_agrees_with_codes() -> None:
    assert found(BUGGY) == BUG and lint("").findings == ()


def test_long_implicit_string_concatenations_are_analysed() -> None:
    # pydoc_data/topics.py shape: a dict of strings made of thousands of implicitly joined
    # parts; evaluating every part of every chain made the key analysis quadratic.
    parts = "\n".join(f"    'line {i} of the topic text\\n'" for i in range(2000))
    source = TRIGGER + "topics = {'assert': (\n" + parts + "\n)}\n" + BUGGY
    lines_before_bug = source.count("\n") - BUGGY.count("\n")
    assert codes(source) == [(lines_before_bug + 8, "IDM001")]


def test_valid_python_beyond_libcst_limits_is_reported_as_such() -> None:
    parts = "\n".join(f"    'line {i}'" for i in range(4000))
    result = check_source(TRIGGER + "topics = (\n" + parts + "\n)\n", "topics.py", Config(), ALL_RULES)
    assert [f.code for f in result.findings] == ["IDM900"]
    assert "valid Python that libcst cannot parse" in result.findings[0].message


def test_a_two_thousand_branch_elif_chain_is_analysed() -> None:
    # each `elif` nests one level deeper in the tree: resolving positions ran out of stack, and
    # the span recorder then failed on every level on the way out, burying the error
    branches = "".join(f"    elif x == {i}:\n        y = {i}\n" for i in range(1, 2000))
    source = BUGGY + "\n\ndef pick(x):\n    if x == 0:\n        y = 0\n" + branches + "    return y\n"
    assert codes(source) == [(8, "IDM001")]


def test_a_name_built_from_itself_is_followed_a_bounded_way() -> None:
    # openstack/ironic's ansible deploy: `args = env + args` before `utils.execute(*args)`; reading
    # the text of `args` went round `args` -> `env + args` -> `args` until the stack ran out
    source = (
        "from tools import utils\n\n\n"
        "def run(db, node, flags):\n"
        "    args = ['tool']\n"
        "    if flags:\n"
        "        prefix = ['env']\n"
        "        args = prefix + args\n"
        "    utils.execute(*args)\n"
        "    node.status = 'deployed'\n"
        "    db.session.commit()\n"
    )
    assert codes(source) == [(10, "IDM103")]


def test_a_statement_over_many_lines_is_read_whole() -> None:
    # the bound on following names counts no part of one expression: ten implicitly joined lines are one text
    words = ["UPDATE ", "orders ", "SET ", "status ", "= ", "'shipped' ", "WHERE ", "id ", "= ", "%s"]
    lines = "".join(f'        "{word}"\n' for word in words)
    source = (
        "def ship(conn, order_id):\n"
        "    cur = conn.cursor()\n"
        "    cur.execute(\n"
        f"{lines}"
        "        ,\n"
        "        (order_id,),\n"
        "    )\n"
        "    conn.commit()\n"
    )
    assert codes(source) == [(3, "IDM103")]
