"""Where a `# noqa` is read and written: only real comments count, a comment covers its whole
range of lines (flake8's mapping: a triple-quoted string with its closing line, a backslash-
continued statement), and a written comment goes at the end of the range, never into a string
or after a backslash, and only when the program is unchanged."""

from __future__ import annotations

import ast
import sqlite3
from pathlib import Path

from click.testing import CliRunner

from idemlint.cli import cli
from idemlint.suppression import add_noqa, edit_keeps_program, find_suppressions, literals, noqa_edit

from conftest import lint

# IDM101 on line 8, the line that opens the triple-quoted UPDATE (lines 8 to 11 are one range).
SQL = '''\
import sqlite3


def mark_paid(conn, order_id):
    row = conn.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row[0] != "pending":
        return
    conn.execute("""
        UPDATE orders SET status = 'paid'
        WHERE id = ?
    """, (order_id,))
    conn.commit()
'''
SQL_SUPPRESSED = SQL.replace('    """, (order_id,))\n', '    """, (order_id,))  # noqa: IDM101\n')

BUGGY = """\
import uuid
import requests
from tenacity import retry, retry_if_exception_type as on, stop_after_attempt, wait_random_exponential


@retry(retry=on(ConnectionError), stop=stop_after_attempt(3), wait=wait_random_exponential())
def charge(order):
    key = str(uuid.uuid4())
    return requests.post("https://pay.example", headers={"Idempotency-Key": key})
"""


def codes(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint(source, unused_noqa=True).findings]


def string_constants(source: str) -> list[str]:
    return [node.value for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Constant)]


def sql_sent(source: str) -> list[str]:
    """The statements sqlite runs when the module's mark_paid runs on a pending order."""
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT)")
    conn.execute("INSERT INTO orders VALUES (1, 'pending')")
    sent: list[str] = []
    conn.set_trace_callback(sent.append)
    namespace: dict[str, object] = {}
    exec(compile(source, "sample.py", "exec", dont_inherit=True), namespace)
    namespace["mark_paid"](conn, 1)  # type: ignore[operator]
    conn.close()
    return sent


# -- reading ---------------------------------------------------------------------------------------


def test_a_noqa_inside_a_string_does_not_suppress() -> None:
    source = SQL.replace(
        '    conn.execute("""\n        UPDATE orders SET status = \'paid\'\n        WHERE id = ?\n    """, (order_id,))\n',
        "    conn.execute(\"UPDATE orders SET status='paid' WHERE id = ? -- # noqa: IDM101\", (order_id,))\n",
    )
    assert "-- # noqa: IDM101" in source
    assert codes(source) == [(8, "IDM101")]  # and no IDM800: the text is not a comment
    assert dict(find_suppressions(source)) == {}


def test_a_noqa_after_the_closing_quotes_suppresses_a_finding_on_the_opening_line() -> None:
    assert codes(SQL) == [(8, "IDM101")]
    assert codes(SQL_SUPPRESSED) == []  # suppressed, and the comment is in use (no IDM800)
    assert dict(find_suppressions(SQL_SUPPRESSED)) == dict.fromkeys(range(8, 12), frozenset({"IDM101"}))


def test_a_parenthesised_call_is_one_range_per_line() -> None:
    source = "f(  # noqa: IDM101\n    1,\n)\n"
    assert dict(find_suppressions(source)) == {1: frozenset({"IDM101"})}


def test_a_file_tokenize_rejects_is_read_line_by_line() -> None:
    source = "def broken(:\nx = '''  # noqa: IDM001\n"
    assert dict(find_suppressions(source)) == {2: frozenset({"IDM001"})}


# -- writing ---------------------------------------------------------------------------------------


def test_add_noqa_puts_the_comment_after_the_closing_quotes_and_sqlite_sees_the_same_sql() -> None:
    added = add_noqa(SQL, {8: {"IDM101"}})
    assert added == (SQL_SUPPRESSED, 1, [])
    compile(added.text, "sample.py", "exec", dont_inherit=True)
    assert string_constants(added.text) == string_constants(SQL)
    sent = sql_sent(SQL)
    assert (
        sql_sent(added.text)
        == sent
        == [
            "SELECT status FROM orders WHERE id = 1",
            "\n        UPDATE orders SET status = 'paid'\n        WHERE id = 1\n    ",
            "COMMIT",
        ]
    )
    assert codes(added.text) == []


def test_add_noqa_after_a_backslash_continuation_goes_on_the_last_line() -> None:
    source = BUGGY.replace("    key = str(uuid.uuid4())\n", "    key = str(uuid.uuid4()) + \\\n        order.suffix\n")
    assert codes(source) == [(8, "IDM001")]
    added = add_noqa(source, {8: {"IDM001"}})
    expected = "    key = str(uuid.uuid4()) + \\\n        order.suffix  # noqa: IDM001\n"
    assert added.refused == [] and expected in added.text
    ast.parse(added.text)
    assert codes(added.text) == []


def test_add_noqa_never_writes_into_an_f_string_that_shows_noqa() -> None:
    line = '    key = str(uuid.uuid4()); note = f"""{order} # noqa: E501\n{key}"""\n'
    source = BUGGY.replace("    key = str(uuid.uuid4())\n", line)
    assert codes(source) == [(8, "IDM001")]
    added = add_noqa(source, {8: {"IDM001"}})
    assert added.refused == []
    assert '{order} # noqa: E501\n{key}"""  # noqa: IDM001\n' in added.text
    assert literals(added.text) == literals(source)
    assert codes(added.text) == []


def test_add_noqa_extends_the_comment_at_the_end_of_the_range() -> None:
    commented = SQL.replace('    """, (order_id,))\n', '    """, (order_id,))  # noqa: E501\n')
    added = add_noqa(commented, {8: {"IDM101"}})
    assert added == (SQL.replace('    """, (order_id,))\n', '    """, (order_id,))  # noqa: E501, IDM101\n'), 1, [])
    plain = SQL.replace('    """, (order_id,))\n', '    """, (order_id,))  # paid once\n')
    assert add_noqa(plain, {8: {"IDM101"}}).text == plain.replace("# paid once\n", "# paid once  # noqa: IDM101\n")
    assert add_noqa(SQL_SUPPRESSED, {8: {"IDM101"}}) == (SQL_SUPPRESSED, 0, [])  # suppressed already


def test_the_language_servers_edit_is_the_same_placement() -> None:
    edit = noqa_edit(SQL, 8, "IDM101")
    assert not isinstance(edit, str) and edit is not None
    assert SQL[: edit.start] + edit.replacement + SQL[edit.end :] == SQL_SUPPRESSED
    assert noqa_edit(SQL_SUPPRESSED, 8, "IDM101") is None


def test_an_edit_that_cannot_be_made_safely_is_refused_with_a_reason() -> None:
    [(line, why)] = add_noqa("x = (\n", {1: {"IDM001"}}).refused
    assert line == 1 and why.startswith("it cannot be tokenized (") and "EOF in multi-line statement" in why
    assert add_noqa("x = 1 +\ny = 2\n", {1: {"IDM001"}}).refused == [
        (1, "the file does not parse (line 1: invalid syntax)")
    ]
    assert add_noqa("x = 1\n", {3: {"IDM001"}}).refused == [(3, "the line is past the end of the file")]


def test_edit_keeps_program_compares_parsing_and_string_literals() -> None:
    assert edit_keeps_program("x = 'a'\n", "x = 'a'  # noqa: IDM001\n") is None
    assert edit_keeps_program("x = 'a'\n", "x = 'a # noqa: IDM001'\n") == "the edit would change a string literal"
    assert edit_keeps_program("x = 1 + \\\n  2\n", "x = 1 + \\  # noqa: IDM001\n  2\n") == (
        "the edited file would not parse (line 1: unexpected character after line continuation character)"
    )


def test_add_noqa_end_to_end_through_the_cli(tmp_path: Path) -> None:
    target = tmp_path / "orders.py"
    target.write_text(SQL)
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--min-confidence", "low", "--add-noqa", str(target)])
    assert result.exit_code == 0, result.stderr
    assert "added noqa comments to 1 line" in result.stderr
    assert target.read_text() == SQL_SUPPRESSED
    after = CliRunner().invoke(cli, ["check", "--no-cache", str(target)])
    assert after.exit_code == 0, after.stdout  # no IDM101, and no IDM800: the comment is in use


# A statement continued by a backslash onto an empty line: its range ends on a line with no code.
NO_PLACE = BUGGY.replace("    key = str(uuid.uuid4())\n", "    key = str(uuid.uuid4()) \\\n\n")


def test_a_refused_comment_is_one_error_line_from_the_cli(tmp_path: Path) -> None:
    target = tmp_path / "pay.py"
    target.write_text(NO_PLACE)
    assert codes(NO_PLACE) == [(8, "IDM001")]
    result = CliRunner().invoke(cli, ["check", "--no-cache", "--min-confidence", "low", "--add-noqa", str(target)])
    assert result.exit_code == 2
    assert f"{target}:8: cannot add a noqa comment: the statement ends on a line with no code" in result.stderr
    assert target.read_text() == NO_PLACE
