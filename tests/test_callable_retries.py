"""Callables handed to a helper that calls them once per attempt: the fact the project index
keeps (`task_retriers`, by position), which modules it is read from, and the contexts a file
gets from it (kind "callable", named by the helper's call)."""

from __future__ import annotations

from pathlib import Path

from idemlint.analysis.project import build_index, summary_candidate
from idemlint.config import Config

PROJECT = Path(__file__).parent / "projects" / "retry_helpers"


def _contexts(source: str) -> list[tuple[str, str]]:
    import libcst as cst

    from idemlint.context import FileContext

    ctx = FileContext("service.py", source, cst.parse_module(source), Config())
    return [(c.kind, c.label) for c in ctx.retry.contexts]


def test_the_index_keeps_the_position_of_the_parameter_a_helper_calls_per_attempt() -> None:
    index = build_index(sorted(PROJECT.rglob("*.py")), PROJECT, Config())
    assert index.task_retriers.get("payouts.retrying.with_retries") == 0
    assert index.task_retriers.get("payouts.tenacious.persistently") == 0  # handed on to tenacity
    assert "payouts.retrying.call_once" not in index.task_retriers  # calls it once, in no loop


def test_a_module_that_only_wraps_a_retry_library_is_summarised() -> None:
    assert summary_candidate((PROJECT / "payouts" / "tenacious.py").read_bytes())
    assert summary_candidate(b"def call_with_retry(fn):\n    return fn()\n")
    assert not summary_candidate(b"def retrieve(order):\n    return order\n")


def test_a_lambda_handed_to_a_helper_that_calls_it_in_a_retry_loop_is_retried() -> None:
    source = """\
import requests

def with_retries(fn, attempts=3):
    for attempt in range(attempts):
        try:
            return fn()
        except requests.ConnectionError:
            continue

def call_once(fn):
    return fn()

def forwards(fn):
    return with_retries(fn)

def pay(client):
    with_retries(lambda: client.pay())
    call_once(lambda: client.pay())
    forwards(fn=lambda: client.pay())
"""
    assert _contexts(source) == [("loop", "retry loop"), ("callable", "with_retries()"), ("callable", "forwards()")]


def test_what_a_partial_is_built_with_is_made_once_but_the_function_it_wraps_runs_per_attempt() -> None:
    source = """\
import functools
from tenacity import Retrying

def attempt(client):
    return client.pay()

def pay(client):
    Retrying()(functools.partial(client.pay, key=1))
    Retrying()(functools.partial(attempt, client))
"""
    assert _contexts(source) == [("callable", "tenacity.Retrying()")]
