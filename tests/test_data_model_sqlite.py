"""Read-decide-write against a real SQLite database: the bug the data-model rules describe,
reproduced, and the very same handler source linted.

Each case keeps a buggy message handler and its fixed twin as source strings. The buggy one
reads the row's status, decides in Python, writes with an UPDATE that only names the row, then
runs a side effect (a ledger row, an e-mail, a refund). The fixed one puts the precondition in
the UPDATE (`... AND status = 'pending'`) and branches on the row count.

The tests exec each source and deliver the same message twice, the way at-least-once delivery
does: a redelivery (visibility timeout, a second consumer, a retried webhook) that arrives while
the first delivery sits between its read and its write. Once on one thread with two connections
(the second delivery runs in full just before the first one's write, which is deterministic),
and once on two threads with two connections and a barrier between read and write. The buggy
handler produces the side effect twice, the fixed one once. A strictly sequential redelivery is
handled once by both, which is why ordinary tests do not catch the bug.

The same strings are linted with idemlint: the buggy source must give exactly the expected
read-decide-write finding and the fixed source nothing.
"""

from __future__ import annotations

import sqlite3
import sys
import threading
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from idemlint.config import Config
from idemlint.engine import check_source
from idemlint.rules import ALL_RULES

# --------------------------------------------------------------------------------------
# Case 1: payment webhook on sqlite3's connection shortcut; side effect: a ledger row.
# --------------------------------------------------------------------------------------

BUGGY_PAYMENT = """\
def handle_payment_succeeded(conn, event):
    order_id = event["order_id"]
    row = conn.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()
    if row is None or row[0] != "pending":
        return  # unknown order, or already paid
    conn.execute("UPDATE orders SET status = 'paid' WHERE id = ?", (order_id,))
    conn.execute("INSERT INTO ledger (order_id, amount_cents) VALUES (?, ?)", (order_id, event["amount_cents"]))
    conn.commit()
"""

FIXED_PAYMENT = """\
def handle_payment_succeeded(conn, event):
    order_id = event["order_id"]
    cur = conn.execute("UPDATE orders SET status = 'paid' WHERE id = ? AND status = 'pending'", (order_id,))
    if cur.rowcount == 0:
        conn.rollback()
        return  # unknown order, or another delivery already paid it
    conn.execute("INSERT INTO ledger (order_id, amount_cents) VALUES (?, ?)", (order_id, event["amount_cents"]))
    conn.commit()
"""

# --------------------------------------------------------------------------------------
# Case 2: shipment consumer with a DB-API cursor; side effect: an e-mail to the customer.
# --------------------------------------------------------------------------------------

BUGGY_DISPATCH = """\
def handle_shipment_dispatched(conn, message, send_email):
    shipment_id = message["shipment_id"]
    cur = conn.cursor()
    cur.execute("SELECT status, customer_email FROM shipments WHERE id = ?", (shipment_id,))
    status, email = cur.fetchone()
    if status != "packed":
        return  # already dispatched
    cur.execute("UPDATE shipments SET status = 'dispatched' WHERE id = ?", (shipment_id,))
    conn.commit()
    send_email(email, "Your parcel is on its way")
"""

FIXED_DISPATCH = """\
def handle_shipment_dispatched(conn, message, send_email):
    shipment_id = message["shipment_id"]
    cur = conn.cursor()
    cur.execute("UPDATE shipments SET status = 'dispatched' WHERE id = ? AND status = 'packed'", (shipment_id,))
    if cur.rowcount == 0:
        conn.rollback()
        return  # duplicate delivery: the first one already dispatched it
    cur.execute("SELECT customer_email FROM shipments WHERE id = ?", (shipment_id,))
    (email,) = cur.fetchone()
    conn.commit()
    send_email(email, "Your parcel is on its way")
"""

# --------------------------------------------------------------------------------------
# Case 3: refund consumer on the SQLAlchemy ORM; side effects: a ledger row and a refund call.
# --------------------------------------------------------------------------------------

BUGGY_REFUND = """\
from sqlalchemy.orm import Session

from billing_models import LedgerEntry, Order


def handle_refund_requested(session: Session, message, issue_refund):
    order = session.get(Order, message["order_id"])
    if order is None or order.status != "paid":
        return  # unknown order, or already refunded
    order.status = "refunded"
    session.add(LedgerEntry(order_id=order.id, amount_cents=-order.amount_cents))
    session.commit()
    issue_refund(order.id, order.amount_cents)
"""

FIXED_REFUND = """\
from sqlalchemy import update
from sqlalchemy.orm import Session

from billing_models import LedgerEntry, Order


def handle_refund_requested(session: Session, message, issue_refund):
    order_id = message["order_id"]
    result = session.execute(update(Order).where(Order.id == order_id, Order.status == "paid").values(status="refunded"))
    if result.rowcount == 0:
        session.rollback()
        return  # unknown order, or another delivery already refunded it
    order = session.get(Order, order_id)
    session.add(LedgerEntry(order_id=order.id, amount_cents=-order.amount_cents))
    session.commit()
    issue_refund(order.id, order.amount_cents)
"""


def line_of(source: str, needle: str) -> int:
    """The 1-based line of the one line of `source` that contains `needle`."""
    hits = [number for number, text in enumerate(source.splitlines(), start=1) if needle in text]
    assert len(hits) == 1, f"{needle!r} occurs on lines {hits}"
    return hits[0]


def load(source: str, name: str) -> Callable[..., Any]:
    """Exec a handler's source, exactly the string that is linted, and return the handler."""
    namespace: dict[str, Any] = {"__name__": "handler"}
    exec(compile(source, "handler.py", "exec"), namespace)
    return namespace[name]


# --------------------------------------------------------------------------------------
# Linting the same sources
# --------------------------------------------------------------------------------------

LINT_CASES = [
    pytest.param(
        BUGGY_PAYMENT,
        {(line_of(BUGGY_PAYMENT, "UPDATE orders SET status = 'paid'"), "IDM101")},
        id="payment-buggy",
    ),
    pytest.param(FIXED_PAYMENT, set(), id="payment-fixed"),
    pytest.param(
        BUGGY_DISPATCH,
        {(line_of(BUGGY_DISPATCH, "UPDATE shipments SET status = 'dispatched'"), "IDM101")},
        id="dispatch-buggy",
    ),
    pytest.param(FIXED_DISPATCH, set(), id="dispatch-fixed"),
    pytest.param(
        BUGGY_REFUND,
        {(line_of(BUGGY_REFUND, 'order.status = "refunded"'), "IDM101")},
        id="refund-buggy",
    ),
    pytest.param(FIXED_REFUND, set(), id="refund-fixed"),
]


@pytest.mark.parametrize(("source", "expected"), LINT_CASES)
def test_idemlint_reports_exactly_the_racy_write(source: str, expected: set[tuple[int, str]]) -> None:
    # The buggy write is a read-decide-write; the non-monotonic-transition rule stays quiet on
    # the same write, and no UPDATE here is conditional-with-ignored-count. The fixes are clean.
    result = check_source(source, "handler.py", Config(), ALL_RULES)
    assert not result.errors
    found = {(f.line, f.code) for f in result.findings}
    assert found == expected


# --------------------------------------------------------------------------------------
# Delivering twice through sqlite3
# --------------------------------------------------------------------------------------

_WRITES = ("UPDATE", "INSERT", "DELETE", "REPLACE")


class PausingConnection:
    """A sqlite3 connection that runs `before_write` once, just before its first write.

    That is the spot between a handler's read and its write: the test parks one delivery
    there while the other delivery runs (or meets it at a barrier).
    """

    def __init__(self, conn: sqlite3.Connection, before_write: Callable[[], object]) -> None:
        self._conn = conn
        self._before_write: Callable[[], object] | None = before_write

    def pause_if_write(self, sql: str) -> None:
        if self._before_write is not None and sql.lstrip().upper().startswith(_WRITES):
            hook, self._before_write = self._before_write, None
            hook()

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        self.pause_if_write(sql)
        return self._conn.execute(sql, params)

    def cursor(self) -> _PausingCursor:
        return _PausingCursor(self, self._conn.cursor())

    def commit(self) -> None:
        self._conn.commit()

    def rollback(self) -> None:
        self._conn.rollback()


class _PausingCursor:
    def __init__(self, owner: PausingConnection, cursor: sqlite3.Cursor) -> None:
        self._owner = owner
        self._cursor = cursor

    def execute(self, sql: str, params: tuple[Any, ...] = ()) -> _PausingCursor:
        self._owner.pause_if_write(sql)
        self._cursor.execute(sql, params)
        return self

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cursor, name)


Delivery = Callable[[Any], None]  # runs the handler once on the given connection


def connect(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, timeout=10)


def deliver_overlapping(path: Path, deliver: Delivery) -> None:
    """Deliver once; when that delivery reaches its first write, the duplicate runs in full
    on a second connection. Single-threaded, so the interleaving is exact."""
    first, second = connect(path), connect(path)
    try:
        deliver(PausingConnection(first, before_write=lambda: deliver(second)))
    finally:
        first.close()
        second.close()


def deliver_concurrently(path: Path, deliver: Delivery) -> None:
    """Two consumers on two threads and two connections; both reach their first write before
    either performs it."""
    barrier = threading.Barrier(2, timeout=10)
    errors: list[BaseException] = []

    def consumer() -> None:
        conn = connect(path)
        try:
            deliver(PausingConnection(conn, before_write=barrier.wait))
        except BaseException as error:  # surfaced below, on the test's thread
            errors.append(error)
            barrier.abort()
        finally:
            conn.close()

    threads = [threading.Thread(target=consumer) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "a consumer hung"
    assert not errors, errors


def deliver_sequentially(path: Path, deliver: Delivery) -> None:
    conn = connect(path)
    try:
        deliver(conn)
        deliver(conn)
    finally:
        conn.close()


@dataclass
class Scenario:
    """One case's database, message and observable side effect."""

    path: Path
    deliver: Delivery
    side_effects: Callable[[], int]
    final_status: Callable[[], str]
    log: list[Any] = field(default_factory=list)


def payment_scenario(tmp_path: Path, source: str) -> Scenario:
    path = tmp_path / "payments.sqlite3"
    with connect(path) as db:
        db.executescript(
            """
            CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT NOT NULL);
            CREATE TABLE ledger (id INTEGER PRIMARY KEY AUTOINCREMENT, order_id INTEGER NOT NULL, amount_cents INTEGER NOT NULL);
            INSERT INTO orders (id, status) VALUES (42, 'pending');
            """
        )
    db.close()
    handler = load(source, "handle_payment_succeeded")
    event = {"type": "payment_intent.succeeded", "order_id": 42, "amount_cents": 1999}

    def count(sql: str) -> Any:
        db = connect(path)
        try:
            return db.execute(sql).fetchone()[0]
        finally:
            db.close()

    return Scenario(
        path=path,
        deliver=lambda conn: handler(conn, event),
        side_effects=lambda: count("SELECT COUNT(*) FROM ledger WHERE order_id = 42"),
        final_status=lambda: count("SELECT status FROM orders WHERE id = 42"),
    )


def dispatch_scenario(tmp_path: Path, source: str) -> Scenario:
    path = tmp_path / "shipments.sqlite3"
    with connect(path) as db:
        db.executescript(
            """
            CREATE TABLE shipments (id INTEGER PRIMARY KEY, status TEXT NOT NULL, customer_email TEXT NOT NULL);
            INSERT INTO shipments (id, status, customer_email) VALUES (7, 'packed', 'ada@example.com');
            """
        )
    db.close()
    handler = load(source, "handle_shipment_dispatched")
    sent: list[tuple[str, str]] = []
    lock = threading.Lock()

    def send_email(to: str, subject: str) -> None:
        with lock:
            sent.append((to, subject))

    def status() -> str:
        db = connect(path)
        try:
            return db.execute("SELECT status FROM shipments WHERE id = 7").fetchone()[0]
        finally:
            db.close()

    return Scenario(
        path=path,
        deliver=lambda conn: handler(conn, {"shipment_id": 7}, send_email),
        side_effects=lambda: len(sent),
        final_status=status,
        log=sent,
    )


SQLITE_CASES = {
    "payment": (payment_scenario, BUGGY_PAYMENT, FIXED_PAYMENT, "paid"),
    "dispatch": (dispatch_scenario, BUGGY_DISPATCH, FIXED_DISPATCH, "dispatched"),
}
DELIVERIES = {"overlapping": deliver_overlapping, "concurrent": deliver_concurrently}


@pytest.mark.parametrize("delivery", DELIVERIES)
@pytest.mark.parametrize("case", SQLITE_CASES)
def test_buggy_handler_runs_the_side_effect_twice(tmp_path: Path, case: str, delivery: str) -> None:
    make, buggy, _fixed, status = SQLITE_CASES[case]
    scenario = make(tmp_path, buggy)
    DELIVERIES[delivery](scenario.path, scenario.deliver)
    assert scenario.final_status() == status
    assert scenario.side_effects() == 2


@pytest.mark.parametrize("delivery", DELIVERIES)
@pytest.mark.parametrize("case", SQLITE_CASES)
def test_fixed_handler_runs_the_side_effect_once(tmp_path: Path, case: str, delivery: str) -> None:
    make, _buggy, fixed, status = SQLITE_CASES[case]
    scenario = make(tmp_path, fixed)
    DELIVERIES[delivery](scenario.path, scenario.deliver)
    assert scenario.final_status() == status
    assert scenario.side_effects() == 1


@pytest.mark.parametrize("version", ["buggy", "fixed"])
@pytest.mark.parametrize("case", SQLITE_CASES)
def test_sequential_redelivery_hides_the_bug(tmp_path: Path, case: str, version: str) -> None:
    # Without overlap the buggy read sees the first delivery's commit: both versions pass.
    make, buggy, fixed, status = SQLITE_CASES[case]
    scenario = make(tmp_path, buggy if version == "buggy" else fixed)
    deliver_sequentially(scenario.path, scenario.deliver)
    assert scenario.final_status() == status
    assert scenario.side_effects() == 1


def test_dispatch_emails_go_to_the_customer(tmp_path: Path) -> None:
    scenario = dispatch_scenario(tmp_path, BUGGY_DISPATCH)
    deliver_overlapping(scenario.path, scenario.deliver)
    assert scenario.log == [("ada@example.com", "Your parcel is on its way")] * 2


# --------------------------------------------------------------------------------------
# Delivering twice through SQLAlchemy (skipped when SQLAlchemy is not installed)
# --------------------------------------------------------------------------------------


@dataclass
class OrmScenario:
    run: Callable[[], None]  # one delivery, on its own Session
    engine: Any
    refunds: list[tuple[int, int]]
    ledger_rows: Callable[[], int]
    final_status: Callable[[], str]


@pytest.fixture
def orm_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], OrmScenario]]:
    sqlalchemy = pytest.importorskip("sqlalchemy")
    from sqlalchemy import Column, Integer, String, create_engine
    from sqlalchemy.orm import Session, declarative_base

    Base = declarative_base()

    class Order(Base):  # type: ignore[misc, valid-type]
        __tablename__ = "orders"
        id = Column(Integer, primary_key=True)
        status = Column(String, nullable=False)
        amount_cents = Column(Integer, nullable=False)

    class LedgerEntry(Base):  # type: ignore[misc, valid-type]
        __tablename__ = "ledger"
        id = Column(Integer, primary_key=True)
        order_id = Column(Integer, nullable=False)
        amount_cents = Column(Integer, nullable=False)

    models = types.ModuleType("billing_models")
    models.Order = Order  # type: ignore[attr-defined]
    models.LedgerEntry = LedgerEntry  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "billing_models", models)

    engines: list[Any] = []

    def make(source: str) -> OrmScenario:
        engine = create_engine(f"sqlite:///{tmp_path / 'refunds.sqlite3'}", connect_args={"timeout": 10})
        engines.append(engine)
        Base.metadata.create_all(engine)
        with Session(engine) as session:
            session.add(Order(id=5, status="paid", amount_cents=4500))
            session.commit()
        handler = load(source, "handle_refund_requested")
        refunds: list[tuple[int, int]] = []
        lock = threading.Lock()

        def issue_refund(order_id: int, amount_cents: int) -> None:
            with lock:
                refunds.append((order_id, amount_cents))

        def run() -> None:
            with Session(engine) as session:
                handler(session, {"order_id": 5}, issue_refund)

        def scalar(sql: str) -> Any:
            with engine.connect() as conn:
                return conn.execute(sqlalchemy.text(sql)).scalar_one()

        return OrmScenario(
            run=run,
            engine=engine,
            refunds=refunds,
            ledger_rows=lambda: scalar("SELECT COUNT(*) FROM ledger WHERE order_id = 5"),
            final_status=lambda: scalar("SELECT status FROM orders WHERE id = 5"),
        )

    yield make
    for engine in engines:
        engine.dispose()


def _before_first_write(engine: Any, hook: Callable[[], object], per_thread: bool) -> None:
    """Call `hook` just before the first INSERT/UPDATE/DELETE on the engine (or, with
    per_thread, on each thread)."""
    from sqlalchemy import event

    done: set[int] = set()

    @event.listens_for(engine, "before_cursor_execute")
    def pause(conn, cursor, statement, parameters, context, executemany):  # noqa: ANN001, ARG001
        if not statement.lstrip().upper().startswith(_WRITES):
            return
        key = threading.get_ident() if per_thread else 0
        if key in done:
            return
        done.add(key)
        hook()


def orm_deliver_overlapping(scenario: OrmScenario) -> None:
    _before_first_write(scenario.engine, scenario.run, per_thread=False)
    scenario.run()


def orm_deliver_concurrently(scenario: OrmScenario) -> None:
    barrier = threading.Barrier(2, timeout=10)
    _before_first_write(scenario.engine, barrier.wait, per_thread=True)
    errors: list[BaseException] = []

    def consumer() -> None:
        try:
            scenario.run()
        except BaseException as error:  # surfaced below, on the test's thread
            errors.append(error)
            barrier.abort()

    threads = [threading.Thread(target=consumer) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads), "a consumer hung"
    assert not errors, errors


ORM_DELIVERIES = {"overlapping": orm_deliver_overlapping, "concurrent": orm_deliver_concurrently}


@pytest.mark.parametrize("delivery", ORM_DELIVERIES)
def test_sqlalchemy_buggy_refund_is_issued_twice(orm_scenario: Callable[[str], OrmScenario], delivery: str) -> None:
    scenario = orm_scenario(BUGGY_REFUND)
    ORM_DELIVERIES[delivery](scenario)
    assert scenario.final_status() == "refunded"
    assert scenario.refunds == [(5, 4500), (5, 4500)]
    assert scenario.ledger_rows() == 2


@pytest.mark.parametrize("delivery", ORM_DELIVERIES)
def test_sqlalchemy_fixed_refund_is_issued_once(orm_scenario: Callable[[str], OrmScenario], delivery: str) -> None:
    scenario = orm_scenario(FIXED_REFUND)
    ORM_DELIVERIES[delivery](scenario)
    assert scenario.final_status() == "refunded"
    assert scenario.refunds == [(5, 4500)]
    assert scenario.ledger_rows() == 1
