"""What users read: positions, per-cause help and per-library advice."""

from __future__ import annotations

from idemlint.config import Config

from conftest import lint


def test_a_syntax_error_is_reported_where_python_reports_it() -> None:
    source = "import uuid\nfrom tenacity import retry\n\n\ndef f(:\n    pass\n"
    (finding,) = lint(source).findings
    try:
        compile(source, "f.py", "exec")
    except SyntaxError as error:
        expected = (error.lineno, error.offset, error.msg)
    assert (finding.code, finding.line, finding.col) == ("IDM900", expected[0], expected[1])
    assert finding.message == f"syntax error: {expected[2]}"
    assert finding.suggestion.startswith("Fix the syntax error")


def test_a_file_too_complex_gets_its_own_help() -> None:
    source = "import uuid\nfrom tenacity import retry\nx = " + "(" * 150 + "1" + ")" * 150 + "\n"
    (finding,) = lint(source).findings
    assert finding.code == "IDM900" and "beyond what idemlint analyses" in finding.suggestion


def test_an_unused_suppression_is_reported_at_its_comment() -> None:
    source = "import uuid\n\nkey = uuid.uuid4()  # noqa: IDM001\n"
    (finding,) = lint(source, unused_noqa=True).findings
    assert (finding.code, finding.line, finding.col, finding.end_col) == ("IDM800", 3, 21, 35)


SQLITE = """\
import sqlite3


def ship(conn: sqlite3.Connection, order_id: int) -> None:
    conn.execute("UPDATE orders SET status = 'shipped' WHERE id = ?", (order_id,))
    conn.commit()
"""

DJANGO = """\
from shop.models import Order


def ship(order_id):
    Order.objects.filter(pk=order_id).update(status="shipped")
"""


def test_advice_uses_the_write_s_own_library_and_placeholder() -> None:
    (sqlite,) = lint(SQLITE).findings
    assert sqlite.code == "IDM103" and "WHERE id = ? AND status IN" in sqlite.suggestion
    (django,) = lint(DJANGO).findings
    assert django.code == "IDM103" and "Model.objects.filter(pk=pk, status__in=" in django.suggestion
    assert "%s" not in sqlite.suggestion + django.suggestion


def test_all_updates_need_count_does_not_call_an_unconditional_update_conditional() -> None:
    source = DJANGO.replace('status="shipped"', 'note="seen"')
    config = Config(all_updates_need_count=True)
    (finding,) = lint(source, config=config).findings
    assert finding.code == "IDM102"
    assert "conditional" not in finding.message and "all-updates-need-count" in finding.message
    assert "if not Order.objects.filter(...).update(...)" in finding.suggestion


def test_management_commands_are_low_confidence() -> None:
    from conftest import FIXTURES

    path = FIXTURES / "data_model" / "management" / "commands" / "refund_order.py"
    (finding,) = lint(path.read_text(), path="shop/management/commands/refund_order.py").findings
    assert (finding.code, finding.confidence) == ("IDM101", "low")
    (elsewhere,) = lint(path.read_text(), path="shop/views.py").findings
    from idemlint.calibration import calibrated

    # on a request path: what was measured for this kind of IDM101 (a borrowed figure never
    # raises the rule's own lowering, so the management command above stays low)
    assert elsewhere.confidence == calibrated("IDM101", elsewhere.evidence, "source", "medium")


WAIT_FOR_SERVICE = """\
import random
import time

import requests


def wait_for_api(url):
    for _attempt in range(30):
        try:
            return requests.get(url, timeout=2)
        except Exception:
            time.sleep(random.uniform(0, 2))
    raise SystemExit("the API never came up")
"""


def test_a_scripts_retry_policy_is_not_judged_but_its_repeats_are() -> None:
    """A program a person runs is one watched client: its catch-all wait-for-the-service loop
    is no herd and no unattended endless loop (IDM201-IDM203 stay quiet), in a script, in a
    `__main__` program anywhere; the same loop in the product, or in an example module users
    copy, is reported."""
    from idemlint.calibration import calibrated

    assert lint(WAIT_FOR_SERVICE, path="scripts/wait_for_api.py").findings == ()
    (example,) = lint(WAIT_FOR_SERVICE, path="examples/wait_for_api.py").findings
    assert (example.code, example.role) == ("IDM201", "example")
    as_program = WAIT_FOR_SERVICE + '\n\nif __name__ == "__main__":\n    wait_for_api("http://localhost:8000")\n'
    assert lint(as_program, path="app/wait.py").findings == ()
    (product,) = lint(WAIT_FOR_SERVICE, path="app/health.py").findings
    assert product.code == "IDM201"
    assert product.confidence == calibrated("IDM201", product.evidence, "source", "high")
    assert product.confidence != "low"


def test_a_noqa_shown_inside_a_string_is_never_an_unused_suppression() -> None:
    source = 'import uuid\n\nDOC = """write `key = uuid.uuid4()  # noqa: IDM001` to silence it"""\n'
    assert lint(source, unused_noqa=True).findings == ()
    real = "import uuid\n\nkey = uuid.uuid4()  # noqa: IDM001\n"
    assert [f.code for f in lint(real, unused_noqa=True).findings] == ["IDM800"]


def test_the_race_help_names_the_column_and_states_the_code_read() -> None:
    source = """\
from shop.models import Shipment, ShipmentState


def dispatch(shipment_id):
    shipment = Shipment.objects.get(pk=shipment_id)
    if shipment.delivery_state in (ShipmentState.PACKED, ShipmentState.LABELLED):
        shipment.delivery_state = ShipmentState.DISPATCHED
        shipment.save()
"""
    (finding,) = [f for f in lint(source).findings if f.code == "IDM101"]
    assert finding.suggestion.startswith(
        "Put the precondition in the write and branch on its count: `Model.objects.filter(pk=pk, "
        "delivery_state__in=[ShipmentState.LABELLED, ShipmentState.PACKED]).update(delivery_state=...)`"
    )


def test_a_write_that_builds_on_its_column_is_told_to_let_the_database_compute_it() -> None:
    django = """\
from shop.models import Product


def sell(product_id, qty):
    product = Product.objects.get(pk=product_id)
    if product.stock < qty:
        return
    product.stock -= qty
    product.save()
"""
    sqlalchemy = """\
from sqlalchemy.orm import Session

from app.models import Wallet


def deposit(session: Session, wallet_id, amount):
    wallet = session.get(Wallet, wallet_id)
    wallet.balance += amount
    session.commit()
"""
    (decided,) = lint(django).findings
    assert decided.code == "IDM101" and "is decided by stock read on line 5" in decided.message
    assert decided.suggestion.startswith(
        'Let the database compute it: `Model.objects.filter(pk=pk).update(stock=F("stock") + ...)`'
    )
    (lost,) = lint(sqlalchemy).findings
    assert lost.message.endswith("one change is lost")
    assert "values(balance=Model.balance + ...)" in lost.suggestion


def test_a_catch_all_after_clauses_that_re_raise_says_it_retries_every_other_exception() -> None:
    source = """\
import time

import requests


def fetch(url):
    for attempt in range(3):
        try:
            return requests.get(url, timeout=5)
        except (ValueError, PermissionError):
            raise
        except Exception:
            time.sleep(2**attempt)
    raise RuntimeError(url)
"""
    (finding,) = [f for f in lint(source).findings if f.code == "IDM201"]
    assert (finding.line, finding.message) == (
        12,
        "the retry loop on line 7 re-raises (ValueError, PermissionError) but retries every other exception "
        "(Exception), including errors a retry cannot fix",
    )
    alone = source.replace("        except (ValueError, PermissionError):\n            raise\n", "")
    (plain,) = [f for f in lint(alone).findings if f.code == "IDM201"]
    assert plain.message.startswith("the retry loop on line 7 retries every exception (Exception)")


def test_the_timeout_message_takes_the_article_its_exception_needs() -> None:
    source = """\
import asyncio

import httpx


async def capture(client: httpx.AsyncClient, payment):
    try:
        await asyncio.wait_for(client.post("https://psp.example/captures", json={"id": payment.id}), 5)
    except asyncio.TimeoutError:
        payment.status = "failed"
        payment.save()
"""
    (finding,) = [f for f in lint(source).findings if f.code == "IDM302"]
    assert finding.message.startswith("an asyncio.TimeoutError from client.post() is handled as a definite failure")


def test_the_race_help_speaks_sqlalchemy_where_the_module_writes_through_a_session() -> None:
    source = """\
from sqlalchemy.orm import Session

from shop.models import Shipment


def dispatch(session: Session, shipment_id):
    shipment = session.get(Shipment, shipment_id)
    if shipment.delivery_state == "packed":
        shipment.delivery_state = "dispatched"
        session.commit()
"""
    (finding,) = [f for f in lint(source).findings if f.code == "IDM101"]
    assert finding.suggestion.startswith(
        "Put the precondition in the write and branch on `.rowcount`: `update(Model).where(Model.id == id_, "
        "Model.delivery_state.in_(['packed'])).values(delivery_state=...)`"
    )


def test_a_timeout_whose_handler_only_rolls_back_the_database_is_low_and_measured_apart() -> None:
    from idemlint.calibration import calibrated
    from idemlint.rules.external import ROLLED_BACK

    source = (
        "import requests\n\n\ndef extend(session, sub):\n    try:\n"
        '        requests.post("https://panel.example/x", json={}, headers={"Idempotency-Key": sub.key}, timeout=5)\n'
        "        session.commit()\n    except Exception:\n        session.rollback()\n        raise\n\n\n"
        "def refund_on_timeout(session, order):\n    try:\n"
        '        requests.post("https://psp.example/x", json={}, headers={"Idempotency-Key": order.key}, timeout=5)\n'
        "    except Exception:\n        session.rollback()\n        refund_order(order)\n"
    )
    rolled, refunded = (f for f in lint(source).findings if f.code == "IDM302")
    assert (rolled.line, rolled.evidence, rolled.confidence) == (8, ROLLED_BACK, "low")
    assert refunded.evidence != ROLLED_BACK
    assert refunded.confidence == calibrated("IDM302", refunded.evidence, "source", "medium")
