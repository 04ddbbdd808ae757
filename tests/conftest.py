from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from idemlint.config import Config
from idemlint.engine import FileResult, check_source
from idemlint.rules import ALL_RULES

FIXTURES = Path(__file__).parent / "fixtures"


# Two small retry loops that several test modules lint: a key minted per attempt (IDM001, with
# a safe fix) and a fixed sleep between attempts (IDM202, with an unsafe jitter fix).
KEY_IN_LOOP = """\
import uuid

import requests


def charge(order):
    for attempt in range(2):
        try:
            return requests.post(
                "https://pay.example/charges",
                headers={"Idempotency-Key": str(uuid.uuid4())},
                timeout=5,
            )
        except requests.ConnectionError:
            continue
"""

# An IDM101 on an instance a caller loaded: measured as the least sure kind of finding (low).
# a key made on each attempt of a tenacity-retried POST: IDM001 on line 8, the CLI tests' sample
KEY_PER_DECORATED_ATTEMPT = """\
import uuid
import requests
from tenacity import retry, retry_if_exception_type as on, stop_after_attempt, wait_random_exponential


@retry(retry=on(ConnectionError), stop=stop_after_attempt(3), wait=wait_random_exponential())
def charge(order):
    key = str(uuid.uuid4())
    return requests.post("https://pay.example", headers={"Idempotency-Key": key})
"""
CALLER_INSTANCE_RACE = """\
from shop.models import PaymentStatus


def on_session_expired(payment):
    if payment.status != PaymentStatus.CANCELLED:
        payment.change_status(PaymentStatus.REJECTED)
"""

SLEEP_IN_LOOP = """\
import time

import requests


def fetch(url):
    for attempt in range(5):
        try:
            return requests.get(url, timeout=5)
        except requests.ConnectionError:
            time.sleep(2**attempt)
    raise RuntimeError("unavailable")
"""


# The real flake8 over files in place, every finding whatever its confidence (what rules find;
# the default view is tested apart, in test_stakes.py)
FLAKE8_EVERY_FINDING = (
    sys.executable,
    "-m",
    "flake8",
    "--select=IDM",
    "--idemlint-min-confidence=low",
    "--format=%(path)s:%(row)d:%(code)s",
)


@pytest.fixture
def calibration_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A calibration table of the test's own in place of the shipped one."""
    from idemlint import calibration

    path = tmp_path / "calibration.json"
    monkeypatch.setattr(calibration, "TABLE", path)
    calibration.table.cache_clear()
    yield path
    calibration.table.cache_clear()


def lint(source: str, path: str = "service.py", config: Config | None = None, unused_noqa: bool = False) -> FileResult:
    return check_source(source, path, config or Config(), ALL_RULES, report_unused_noqa=unused_noqa)


def found(source: str, **kwargs: object) -> set[tuple[int, str]]:
    return {(f.line, f.code) for f in lint(source, **kwargs).findings}  # type: ignore[arg-type]


@pytest.fixture
def lint_source():  # type: ignore[no-untyped-def]
    return lint


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs in tests never touch the user's cache folder, and the machine's colour settings
    (FORCE_COLOR, NO_COLOR, often set on CI) never change what a test reads."""
    monkeypatch.setenv("IDEMLINT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
