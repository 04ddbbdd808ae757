"""Written inline or through a helper in another module, the same bug gives the same finding.

Each case is a small project checked by the real CLI twice: once with the bug written in the
function (`inline`), once with the same statement moved into a helper of another module and
called in its place (`helper`). The finding's code must be the same, on the line where the
retried or racing statement stands (the helper's chain is the finding's related locations).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.cli import cli

# (code, the statement inline, the helper module, the call that replaces the statement)
RETRIED = """\
import time
import uuid

import requests
from tenacity import retry, stop_after_attempt, wait_random_exponential

from shop import helpers

URL = "https://psp.example/charges"


@retry(stop=stop_after_attempt(3), wait=wait_random_exponential(max=10))
def run(body):
    {statement}
"""

LOOP = """\
import time

import requests

from shop import helpers

URL = "https://psp.example/charges"


def run(body):
    for attempt in range(5):
        try:
            return requests.put(URL, json=body, timeout=5)
        except requests.ConnectionError:
            {statement}
"""

TIMEOUT = """\
import requests

from shop import helpers
from shop.models import Order

URL = "https://psp.example/charges"


def run(order_id, body):
    order = Order.objects.get(pk=order_id)
    try:
        {statement}
    except requests.Timeout:
        order.status = "failed"
        order.save()
"""

DATA = """\
from shop import helpers
from shop.models import Order


def run(order_id):
    order = Order.objects.get(pk=order_id)
    {statement}
    helpers.notify_shipped(order)
"""

COUNT = """\
from shop import helpers
from shop.models import Order


def run(order_id):
    {statement}
    helpers.notify_paid(order_id)
"""

HELPERS = {
    "key": """\
import uuid

import requests


def charge(url, body):
    return requests.post(url, json=body, headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=5)
""",
    "post": """\
import requests


def charge(url, body):
    return requests.post(url, json=body, timeout=5)
""",
    "sleep": """\
import time


def sleep_ms(ms):
    time.sleep(ms / 1000)
""",
    "claim": """\
from shop.models import Order


def claim(order_id):
    return Order.objects.filter(pk=order_id, status="pending").update(status="paid")
""",
    "setter": """\
from django.db import models


class Order(models.Model):
    def move_to(self, status):
        self.status = status
        self.save()

    def ship(self):
        self.status = "shipped"
        self.save()
""",
}

CASES = [
    (
        "IDM001",
        RETRIED,
        "key",
        'return requests.post(URL, json=body, headers={"Idempotency-Key": str(uuid.uuid4())}, timeout=5)',
        "return helpers.charge(URL, body)",
        14,
    ),
    (
        "IDM301",
        RETRIED,
        "post",
        "return requests.post(URL, json=body, timeout=5)",
        "return helpers.charge(URL, body)",
        14,
    ),
    ("IDM202", LOOP, "sleep", "time.sleep(0.5)", "helpers.sleep_ms(500)", 15),
    ("IDM302", TIMEOUT, "post", "requests.post(URL, json=body, timeout=5)", "helpers.charge(URL, body)", 13),
    (
        "IDM102",
        COUNT,
        "claim",
        'Order.objects.filter(pk=order_id, status="pending").update(status="paid")',
        "helpers.claim(order_id)",
        6,
    ),
]


def _project(root: Path, template: str, helper: str, statement: str) -> Path:
    (root / "shop").mkdir(parents=True)
    (root / "pyproject.toml").write_text("[tool.idemlint]\n")
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "models.py").write_text("from django.db import models\n\n\nclass Order(models.Model):\n    pass\n")
    (root / "shop" / "helpers.py").write_text(HELPERS[helper])
    (root / "shop" / "service.py").write_text(template.format(statement=statement))
    return root


def _findings(root: Path, monkeypatch: pytest.MonkeyPatch, code: str) -> list[tuple[str, int]]:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(
        cli, ["check", "--format", "json", "--exit-zero", "--no-cache", "--min-confidence", "low", "--select", code]
    )
    assert result.exit_code == 0, result.output
    return [(f["path"], f["line"]) for f in json.loads(result.stdout)]


@pytest.mark.parametrize(("code", "template", "helper", "inline", "through", "line"), CASES, ids=[c[0] for c in CASES])
def test_the_same_bug_gives_the_same_finding(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    code: str,
    template: str,
    helper: str,
    inline: str,
    through: str,
    line: int,
) -> None:
    written_inline = _project(tmp_path / "inline", template, helper, inline)
    written_through = _project(tmp_path / "helper", template, helper, through)
    assert _findings(written_inline, monkeypatch, code) == [("shop/service.py", line)]
    assert _findings(written_through, monkeypatch, code) == [("shop/service.py", line)]


DECIDED = """\
from shop import helpers
from shop.models import Order


def run(order_id):
    order = Order.objects.get(pk=order_id)
    if order.status == "paid":
        {statement}
        helpers.notify_shipped(order)
"""


def test_a_state_a_model_method_writes_is_the_state_written_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inline = _project(tmp_path / "inline", DATA, "post", 'order.status = "shipped"; order.save()')
    through = _project(tmp_path / "helper", DATA, "post", 'order.move_to("shipped")')
    (through / "shop" / "models.py").write_text(HELPERS["setter"])
    assert _findings(inline, monkeypatch, "IDM103") == [("shop/service.py", 7)]
    # `ship()` writes its own literal: that is reported once, in the method, not at each caller
    assert _findings(through, monkeypatch, "IDM103") == [("shop/models.py", 10), ("shop/service.py", 7)]


@pytest.mark.parametrize("statement", ['order.status = "shipped"; order.save()', "order.ship()"])
def test_a_decision_before_a_model_method_is_the_decision_inline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, statement: str
) -> None:
    root = _project(tmp_path / "project", DECIDED, "post", statement)
    (root / "shop" / "models.py").write_text(HELPERS["setter"])
    assert _findings(root, monkeypatch, "IDM101") == [("shop/service.py", 8)]


def test_a_method_that_tests_its_own_state_first_writes_nothing_for_its_callers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`settle()` writes only after a test on its own state: not a write its caller makes with
    no precondition (the method's own read-decide-write is reported in the method)."""
    root = _project(tmp_path / "project", DATA, "post", "order.settle()")
    (root / "shop" / "models.py").write_text(
        "from django.db import models\n\n\nclass Order(models.Model):\n    def settle(self):\n"
        '        if self.status != "paid":\n            return\n        self.status = "settled"\n'
        "        self.save()\n"
    )
    assert _findings(root, monkeypatch, "IDM103") == []
    assert _findings(root, monkeypatch, "IDM101") == [("shop/models.py", 8)]
