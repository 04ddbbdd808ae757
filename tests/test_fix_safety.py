"""A safe fix never changes what runs inside a loop.

For every fix of `examples/` and of the fix fixtures, and for generated retry loops, the
calls inside each loop are compared on the AST before and after fixing: a safe fix may only
take key-making calls (`uuid4()`, `str()`...) out of a loop and never adds or moves any other
call; an unsafe fix may add calls (jitter) but never takes a non-key call out of its loop.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from idemlint.config import Config
from idemlint.fixes import fix_source
from idemlint.rules import ALL_RULES

from conftest import FIXTURES, lint

EXAMPLES = Path(__file__).parent.parent / "examples"
# What a hoisted key may be made of: the only calls a fix may take out of a loop.
KEY_MAKING = {"uuid.uuid4", "uuid.uuid1", "uuid4", "str", "secrets.token_hex", "secrets.token_urlsafe", "hex"}


def loop_calls(source: str) -> list[Counter[str]]:
    """For each loop, in source order, the callees of the calls inside it."""
    loops = [n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]
    loops.sort(key=lambda n: (n.lineno, n.col_offset))
    return [
        Counter(ast.unparse(c.func) for stmt in loop.body for c in ast.walk(stmt) if isinstance(c, ast.Call))
        for loop in loops
    ]


def assert_loops_keep_their_calls(before: str, after: str, safe: bool) -> None:
    old, new = loop_calls(before), loop_calls(after)
    assert len(old) == len(new), "a fix added or removed a loop"
    for index, (was, now) in enumerate(zip(old, new, strict=True)):
        taken_out = was - now
        assert set(taken_out) <= KEY_MAKING, f"loop {index}: {dict(taken_out)} left the loop"
        if safe:
            assert not now - was, f"loop {index}: a safe fix added {dict(now - was)}"


# Files with a loop and a fix that applies there: the examples' gateway and the fix fixtures.
FIXED_SOURCES = [
    p
    for p in (
        *sorted(EXAMPLES.rglob("*.py")),
        *sorted(p for p in (FIXTURES / "fixes").glob("*.py") if not p.name.endswith(".fixed.py")),
    )
    if loop_calls(p.read_text(encoding="utf-8"))
]


def test_the_fix_sources_are_the_ones_with_loops() -> None:
    assert [p.name for p in FIXED_SOURCES] == [
        "gateway.py",
        "IDM001_helper_key.py",
        "IDM001_hoist_key.py",
        "IDM202_add_jitter.py",
    ]


@pytest.mark.parametrize("path", FIXED_SOURCES, ids=lambda p: p.name)
@pytest.mark.parametrize("unsafe", [False, True], ids=["safe", "unsafe"])
def test_fixes_keep_every_call_in_its_loop(path: Path, unsafe: bool) -> None:
    source = path.read_text(encoding="utf-8")
    offered = [f for f in lint(source, path=path.name).findings if f.fix is not None and (f.fix.safe or unsafe)]
    outcome = fix_source(source, path.name, Config(), ALL_RULES, unsafe=unsafe)
    assert outcome.error is None
    assert (outcome.text != source) == bool(offered), "an offered fix is applied, and only then does the text change"
    assert_loops_keep_their_calls(source, outcome.text, safe=not unsafe)


def test_the_example_charge_is_still_posted_on_every_attempt() -> None:
    """The defect the fix had: the whole `response = requests.post(...)` left the loop."""
    path = EXAMPLES / "payments" / "gateway.py"
    outcome = fix_source(path.read_text(encoding="utf-8"), path.name, Config(), ALL_RULES, unsafe=False)
    fixed = ast.parse(outcome.text)
    charge = next(f for f in ast.walk(fixed) if isinstance(f, ast.FunctionDef) and f.name == "create_charge")
    first, loop = charge.body[1], charge.body[2]
    assert ast.unparse(first) == "idempotency_key = str(uuid.uuid4())"
    assert isinstance(loop, ast.For)
    assert "requests.post" in {ast.unparse(c.func) for c in ast.walk(loop) if isinstance(c, ast.Call)}


# -- generated retry loops --------------------------------------------------------------

KEY_EXPRESSIONS = ["str(uuid.uuid4())", "uuid.uuid4().hex", "secrets.token_hex(16)", "f'{uuid.uuid4()}'"]
NOT_MOVABLE = ["f'{uuid.uuid4()}-{attempt}'", "sign(str(uuid.uuid4()))", "str(uuid.uuid4()) + prefix[attempt]"]


@st.composite
def retry_loops(draw: st.DrawFn) -> tuple[str, bool]:
    """A retry loop sending a key, and whether moving the key out of it is the same computation."""
    key = draw(st.sampled_from(KEY_EXPRESSIONS + NOT_MOVABLE))
    inline = draw(st.booleans())
    send = draw(st.sampled_from(["response = {call}", "return {call}", "{call}", "results.append({call})"]))
    around = draw(st.sampled_from(["plain", "inner_for", "comprehension", "with", "if"]))
    loop = draw(st.sampled_from(["for attempt in range(3):", "while attempt < 3:"]))
    value = key if inline else "key"
    call = f'requests.post(URL, json=body, headers={{"Idempotency-Key": {value}}}, timeout=5)'
    if around == "comprehension":
        call = f"[{call} for item in items]"
    lines = [send.format(call=call)]
    if not inline:
        lines.insert(0, f"key = {key}")
    if around == "inner_for":
        lines = ["for item in items:", *("    " + line for line in lines)]
    elif around in ("with", "if"):
        header = "with lock:" if around == "with" else "if ready(attempt):"
        lines = [header, *("    " + line for line in lines)]
    body = "\n".join("            " + line for line in lines)
    per_item = around == "inner_for" or (around == "comprehension" and inline)
    movable = key in KEY_EXPRESSIONS and not per_item and not (around == "if" and not inline)
    source = (
        "import secrets\nimport time\nimport uuid\n\nimport requests\n\n\n"
        "def send(body, items, prefix, results):\n"
        "    attempt = 0\n"
        f"    {loop}\n"
        "        try:\n"
        f"{body}\n"
        "            break\n"
        "        except requests.ConnectionError:\n"
        "            attempt += 1\n"
        "            time.sleep(0.5)\n"
    )
    return source, movable


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(retry_loops())
def test_safe_fixes_of_generated_retry_loops_move_only_the_key(case: tuple[str, bool]) -> None:
    source, movable = case
    outcome = fix_source(source, "generated.py", Config(), ALL_RULES, unsafe=False)
    assert outcome.error is None
    ast.parse(outcome.text)
    assert_loops_keep_their_calls(source, outcome.text, safe=True)
    if not movable:
        assert outcome.text == source, "a key made per item, from per-attempt values or under an if must not move"
    else:
        assert outcome.text != source, "a key made only of key-making calls moves out of the loop"
