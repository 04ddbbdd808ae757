"""Fixes leave files as tidy as they found them (issue 13).

Every line a fix brings in ends like the file's other lines (CRLF stays CRLF); an argument
goes with its comma; an added import lands where isort puts it, and a name a fix stops using
leaves its import. The last two are checked with ruff itself: a file that passed
`ruff check --select I,F401 --isolated` before fixing passes it after.
"""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.cli import cli
from idemlint.config import Config
from idemlint.fixes import fix_source
from idemlint.rules import ALL_RULES

from conftest import FIXTURES, KEY_IN_LOOP, SLEEP_IN_LOOP

FIX_FIXTURES = sorted(p for p in (FIXTURES / "fixes").glob("*.py") if not p.name.endswith(".fixed.py"))


def fixed(source: str, unsafe: bool = True) -> str:
    outcome = fix_source(source, "service.py", Config(), ALL_RULES, unsafe=unsafe)
    assert outcome.error is None
    again = fix_source(outcome.text, "service.py", Config(), ALL_RULES, unsafe=unsafe)
    assert again.applied == 0, "fixes must settle"
    return outcome.text


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def bare_line_breaks(text: str) -> list[str]:
    """The lines of a CRLF text that end otherwise (LF only, or CR only)."""
    return [line for line in text.splitlines(keepends=True) if not line.endswith("\r\n")]


# -- 1. line endings -------------------------------------------------------------------------


def test_crlf_hoisted_key_line_keeps_crlf() -> None:
    """IDM001 puts `idempotency_key = str(uuid.uuid4())` above the loop (insert_before)."""
    lf = fixed(KEY_IN_LOOP, unsafe=False)
    assert "    idempotency_key = str(uuid.uuid4())\n    for attempt" in lf
    text = fixed(crlf(KEY_IN_LOOP), unsafe=False)
    assert bare_line_breaks(text) == []
    assert text == crlf(lf)


def test_crlf_added_import_keeps_crlf() -> None:
    """IDM202 adds `import random` (insert_before / insert_after an import)."""
    lf = fixed(SLEEP_IN_LOOP)
    assert lf.startswith("import random\nimport time\n")
    text = fixed(crlf(SLEEP_IN_LOOP))
    assert bare_line_breaks(text) == []
    assert text == crlf(lf)


@pytest.mark.parametrize("path", FIX_FIXTURES, ids=lambda p: p.name)
def test_crlf_fixture_fixes_match_the_fixed_files(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    expected = path.with_name(path.stem + ".fixed.py").read_text(encoding="utf-8")
    text = fixed(crlf(source))
    assert bare_line_breaks(text) == []
    assert text == crlf(expected)


def test_cli_fix_keeps_crlf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    source = KEY_IN_LOOP.replace("            continue\n", "            time.sleep(2**attempt)\n").replace(
        "import uuid\n", "import time\nimport uuid\n"
    )
    (tmp_path / "pay.py").write_bytes(crlf(source).encode())
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["check", "--fix", "--unsafe-fixes", "--no-cache", "pay.py"])
    assert "fixed 2 findings in 1 file" in result.stderr, result.output
    written = (tmp_path / "pay.py").read_bytes()
    assert written.startswith(b"import random\r\nimport time\r\nimport uuid\r\n")
    assert b"\r\n    idempotency_key = str(uuid.uuid4())\r\n    for attempt" in written
    assert b"\n" not in written.replace(b"\r\n", b"") and b"\r" not in written.replace(b"\r\n", b"")


def test_insert_after_a_last_line_without_line_break() -> None:
    """An import inserted after the file's last line starts on a line of its own."""
    import libcst as cst

    from idemlint.fix_offsets import line_starts, resolve_fix
    from idemlint.parsing import positions
    from idemlint.rule import FixPlan, NodeEdit
    from idemlint.suppression import split_lines

    text = "import os\r\nimport time"
    module = cst.parse_module(text)
    plan = FixPlan((NodeEdit("insert_after", module.body[-1], "import uuid\n"),), safe=False, description="")
    fix = resolve_fix(plan, positions(module), text, split_lines(text), line_starts(text))
    assert fix is not None
    (edit,) = fix.edits
    assert text[: edit.start] + edit.replacement + text[edit.end :] == "import os\r\nimport time\r\nimport uuid\r\n"


# -- 2a. jitter=None goes with its comma -----------------------------------------------------

BACKOFF = """\
import backoff
import requests


{decorator}
def fetch():
    return requests.get("https://rates.example", timeout=5)
"""


@pytest.mark.parametrize(
    ("decorator", "expected"),
    [
        pytest.param(
            "@backoff.on_exception(backoff.expo, OSError, jitter=None, max_tries=5)",
            "@backoff.on_exception(backoff.expo, OSError, max_tries=5)",
            id="middle",
        ),
        pytest.param(
            "@backoff.on_exception(backoff.expo, OSError, max_tries=5, jitter=None)",
            "@backoff.on_exception(backoff.expo, OSError, max_tries=5)",
            id="last",
        ),
        pytest.param(
            "@backoff.on_exception(backoff.expo, OSError, max_tries=5, jitter=None,)",
            "@backoff.on_exception(backoff.expo, OSError, max_tries=5,)",
            id="last-trailing-comma",
        ),
        pytest.param(
            "@backoff.on_exception(\n    backoff.expo,\n    OSError,\n    jitter=None,\n    max_tries=5,\n)",
            "@backoff.on_exception(\n    backoff.expo,\n    OSError,\n    max_tries=5,\n)",
            id="multiline-middle",
        ),
        pytest.param(
            "@backoff.on_exception(\n    backoff.expo,\n    OSError,\n    max_tries=5,\n    jitter=None,  # off\n)",
            "@backoff.on_exception(\n    backoff.expo,\n    OSError,\n    max_tries=5,\n)",
            id="multiline-last",
        ),
        pytest.param(
            "@backoff.on_exception(\n    backoff.expo,\n    OSError,\n    max_tries=5,\n    jitter=None\n)",
            "@backoff.on_exception(\n    backoff.expo,\n    OSError,\n    max_tries=5,\n)",
            id="multiline-last-no-trailing-comma",
        ),
        pytest.param(
            "@backoff.on_exception(backoff.expo, OSError,\n                      max_tries=5, jitter=None)",
            "@backoff.on_exception(backoff.expo, OSError,\n                      max_tries=5)",
            id="hanging-last",
        ),
        pytest.param(
            "@backoff.on_exception(backoff.expo, OSError, jitter=None,\n                      max_tries=5)",
            "@backoff.on_exception(backoff.expo, OSError,\n                      max_tries=5)",
            id="hanging-end-of-line",
        ),
    ],
)
def test_jitter_none_goes_with_its_comma(decorator: str, expected: str) -> None:
    assert fixed(BACKOFF.format(decorator=decorator)) == BACKOFF.format(decorator=expected)
    assert fixed(crlf(BACKOFF.format(decorator=decorator))) == crlf(BACKOFF.format(decorator=expected))


def test_jitter_none_in_an_indented_decorator_keeps_the_other_comments() -> None:
    source = (
        "import backoff\n\n\nclass Client:\n    @backoff.on_exception(\n        backoff.expo,\n        OSError,\n"
        "        max_tries=5,  # five\n        jitter=None,  # off\n    )\n    def fetch(self):\n"
        "        return self.session.get('https://rates.example', timeout=5)\n"
    )
    assert fixed(source) == source.replace("        jitter=None,  # off\n", "")


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ("f(x=None)", "f()"),
        ("f(x=None,)", "f()"),
        ("f(x=None, b)", "f(b)"),
        ("f(a, x=None)", "f(a)"),
        ("f(a, x=None, b)", "f(a, b)"),
        ("f(\n    x=None\n)", "f(\n)"),
        ("f(\n    a, x=None,\n    b,\n)", "f(\n    a,\n    b,\n)"),
        ("f(\n    x=None, a,\n)", "f(\n    a,\n)"),
    ],
)
def test_delete_item_takes_one_comma(before: str, after: str) -> None:
    from idemlint.fix_offsets import delete_item

    start = before.index("x=None")
    edit = delete_item(before, start, start + len("x=None"))
    assert before[: edit.start] + before[edit.end :] == after


# -- 2b/2c. imports where isort puts them, none left unused -----------------------------------


def _ruff() -> list[str] | None:
    if importlib.util.find_spec("ruff") is not None:
        return [sys.executable, "-m", "ruff"]
    found = shutil.which("ruff")
    return [found] if found else None


def ruff_problems(source: str, folder: Path) -> str:
    """What `ruff check --select I,F401 --isolated` says about `source` ("" when clean).
    The file is alone in its folder, so no module it imports counts as first-party."""
    command = _ruff()
    assert command is not None, "ruff is a test dependency: pip install '.[test]'"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "case.py").write_bytes(source.encode())
    result = subprocess.run(
        [*command, "check", "--select", "I,F401", "--isolated", "--no-cache", "case.py"],
        cwd=folder,
        capture_output=True,
        text=True,
        check=False,
    )
    return "" if result.returncode == 0 else result.stdout + result.stderr


def assert_stays_isort_clean(source: str, tmp_path: Path) -> str:
    assert ruff_problems(source, tmp_path / "before") == "", "the case must start clean"
    text = fixed(source)
    assert text != source
    assert ruff_problems(text, tmp_path / "after") == "", text
    assert ruff_problems(crlf(text), tmp_path / "after-crlf") == "", text
    assert fixed(crlf(source)) == crlf(text)
    return text


def test_fixture_stays_isort_clean(tmp_path: Path) -> None:
    path = FIXTURES / "fixes" / "IDM202_add_jitter.py"
    assert_stays_isort_clean(path.read_text(encoding="utf-8"), tmp_path)


LOOP = """

def fetch(session, url):
    for attempt in range(5):
        try:
            return session.get(url, timeout=5)
        except ConnectionError:
            {sleep}(2**attempt)
    raise RuntimeError("unavailable")
"""

# imports, and the sleep the loop calls; every other imported name is used
SLEEP_HEADERS = {
    "time": ("import time\n\nimport requests\n", "time.sleep"),
    "asyncio-time": ("import asyncio\nimport time\n\nimport requests\n", "time.sleep"),
    "sys-time": ("import sys\nimport time\n\nimport requests\n", "time.sleep"),
    "time-uuid": ("import time\nimport uuid\n\nimport requests\n", "time.sleep"),
    "time-only": ("import time\n", "time.sleep"),
    "from-time": ("from time import sleep\n\nimport requests\n", "sleep"),
    "os-from-time": ("import os\nfrom time import sleep\n\nimport requests\n", "sleep"),
    "time-from-datetime": ("import time\nfrom datetime import date\n\nimport requests\n", "time.sleep"),
    "comments-above": ("# standard library\nimport time\n\n# third party\nimport requests\n", "time.sleep"),
    "no-stdlib": ("import gevent\nimport requests\n", "gevent.sleep"),
    "no-stdlib-from": ("import requests\nfrom gevent import sleep\n", "sleep"),
    "no-stdlib-local": ("import gevent\nimport requests\n\nfrom . import settings\n", "gevent.sleep"),
}


def sleep_module(imports: str, sleep: str) -> str:
    names = [n for n in ("asyncio", "sys", "uuid", "os", "date", "requests", "settings") if f"import {n}\n" in imports]
    return imports + (f"\nUSED = ({', '.join(names)},)\n" if names else "") + LOOP.format(sleep=sleep)


@pytest.mark.parametrize("docstring", [False, True], ids=["", "docstring"])
@pytest.mark.parametrize("future", [False, True], ids=["", "future"])
@pytest.mark.parametrize("header", sorted(SLEEP_HEADERS))
def test_random_import_stays_isort_clean(header: str, future: bool, docstring: bool, tmp_path: Path) -> None:
    source = sleep_module(*SLEEP_HEADERS[header])
    if future:
        source = "from __future__ import annotations\n\n" + source
    if docstring:
        source = '"""Rates."""\n\n' + source
    text = assert_stays_isort_clean(source, tmp_path)
    assert text.count("import random\n") == 1


@pytest.mark.parametrize(
    ("imports", "expected"),
    [
        ("import time\n\nimport requests\n", "import random\nimport time\n\nimport requests\n"),
        ("import os\nimport time\n", "import os\nimport random\nimport time\n"),
        ("import time\nfrom datetime import date\n", "import random\nimport time\nfrom datetime import date\n"),
        ("import gevent\nimport requests\n", "import random\n\nimport gevent\nimport requests\n"),
        (
            "from __future__ import annotations\n\nimport gevent\n",
            "from __future__ import annotations\n\nimport random\n\nimport gevent\n",
        ),
        (
            "from __future__ import annotations\n\nimport time\n",
            "from __future__ import annotations\n\nimport random\nimport time\n",
        ),
        (
            '"""Rates."""\n\nimport gevent\nimport requests\n',
            '"""Rates."""\n\nimport random\n\nimport gevent\nimport requests\n',
        ),
    ],
)
def test_random_import_placement(imports: str, expected: str) -> None:
    text = fixed(sleep_module(imports, "gevent.sleep" if "gevent" in imports else "time.sleep"))
    assert text.startswith(expected), text


def tenacity_module(imports: str, *waits: str, extra: str = "") -> str:
    functions = "".join(
        f"\n\n@retry(\n    stop=stop_after_attempt(3),\n    wait={wait},\n)\n"
        f"def fetch_{i}(session):\n    return session.get('https://rates.example', timeout=5)\n"
        for i, wait in enumerate(waits)
    )
    return imports + extra + functions


def single(*names: str) -> str:
    return f"from tenacity import {', '.join(('retry', 'stop_after_attempt', *names))}\n"


def wrapped(*names: str) -> str:
    return "from tenacity import (\n" + "".join(f"    {n},\n" for n in ("retry", "stop_after_attempt", *names)) + ")\n"


# imports, the waits of the retried functions, other code
TENACITY_CASES = {
    "exponential": (single("wait_exponential"), ["wait_exponential()"], ""),
    "exponential-wrapped": (wrapped("wait_exponential"), ["wait_exponential(max=9)"], ""),
    "exponential-twice": (single("wait_exponential"), ["wait_exponential()", "wait_exponential(max=9)"], ""),
    "exponential-twice-wrapped": (wrapped("wait_exponential"), ["wait_exponential()", "wait_exponential(max=9)"], ""),
    "exponential-used-elsewhere": (single("wait_exponential"), ["wait_exponential()"], "\nSLOW = wait_exponential\n"),
    "exponential-new-name-present": (
        wrapped("wait_exponential", "wait_random_exponential"),
        ["wait_exponential()"],
        "\nFAST = wait_random_exponential\n",
    ),
    "exponential-twice-new-name-present": (
        wrapped("wait_exponential", "wait_random_exponential"),
        ["wait_exponential()", "wait_exponential(max=9)"],
        "\nFAST = wait_random_exponential\n",
    ),
    "exponential-alias": (
        single() + "from tenacity import wait_exponential as backoff_wait\n",
        ["backoff_wait()"],
        "",
    ),
    "exponential-from-wait-module": (
        single() + "from tenacity.wait import wait_exponential\n",
        ["wait_exponential()"],
        "",
    ),
    "exponential-module-spelled": ("import tenacity\n" + single(), ["tenacity.wait_exponential()"], ""),
    "exponential-no-from-import": ("import tenacity\n", [], ""),
    "fixed": (single("wait_fixed"), ["wait_fixed(3)"], ""),
    "fixed-grows-past-88": (
        "from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_fixed\n",
        ["wait_fixed(3)"],
        "\nCONDITION = retry_if_exception_type(OSError)\n",
    ),
    "fixed-and-exponential": (wrapped("wait_exponential", "wait_fixed"), ["wait_fixed(3)", "wait_exponential()"], ""),
    "classes-first": (
        "from tenacity import RetryError, retry, stop_after_attempt, wait_fixed\n",
        ["wait_fixed(3)"],
        "\nERROR = RetryError\n",
    ),
    "third-party-and-local": (
        "import requests\n" + single("wait_exponential") + "\nfrom . import settings\n",
        ["wait_exponential()"],
        "\nUSED = (requests, settings)\n",
    ),
}


@pytest.mark.parametrize("case", sorted(TENACITY_CASES))
def test_tenacity_imports_stay_isort_clean_and_used(case: str, tmp_path: Path) -> None:
    imports, waits, extra = TENACITY_CASES[case]
    if case == "exponential-no-from-import":
        source = (
            "import tenacity\n\n\n@tenacity.retry(stop=tenacity.stop_after_attempt(3), wait=tenacity.wait_fixed(3))\n"
            "def fetch(session):\n    return session.get('https://rates.example', timeout=5)\n"
        )
    else:
        source = tenacity_module(imports, *waits, extra=extra)
    text = assert_stays_isort_clean(source, tmp_path)
    head = text.split("\n\n\n")[0]
    if any(w.startswith(("wait_exponential", "backoff_wait")) for w in waits):
        assert "wait_random_exponential" in head
        assert ("wait_exponential" in head) == ("SLOW" in extra)


def test_replaced_name_leaves_a_single_line_import() -> None:
    source = tenacity_module(
        "from tenacity import retry, stop_after_attempt, wait_exponential\n", "wait_exponential(max=9)"
    )
    text = fixed(source)
    assert text.startswith("from tenacity import retry, stop_after_attempt, wait_random_exponential\n\n")


def test_replaced_name_leaves_its_own_import_line() -> None:
    source = tenacity_module(
        "from tenacity import retry, stop_after_attempt, wait_random_exponential\n"
        "from tenacity.wait import wait_exponential\n",
        "wait_exponential(max=9)",
        extra="\nFAST = wait_random_exponential\n",
    )
    text = fixed(source)
    assert text.startswith("from tenacity import retry, stop_after_attempt, wait_random_exponential\n\nFAST")


def test_replaced_name_stays_while_a_suppressed_finding_uses_it() -> None:
    source = tenacity_module(
        wrapped("wait_exponential"),
        "wait_exponential()",
        "wait_exponential(max=9),  # noqa: IDM202",
    )
    text = fixed(source)
    assert "    wait_exponential,\n    wait_random_exponential,\n" in text
    assert "wait=wait_random_exponential()," in text and "wait=wait_exponential(max=9),  # noqa" in text


def test_long_import_line_with_a_comment_wraps_like_isort() -> None:
    source = tenacity_module(
        "from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_fixed  # noqa: E501\n",
        "wait_fixed(3)",
    )
    text = fixed(source)
    assert text.startswith(
        "from tenacity import (  # noqa: E501\n    retry,\n    retry_if_exception_type,\n"
        "    stop_after_attempt,\n    wait_fixed,\n    wait_random,\n)\n"
    )
