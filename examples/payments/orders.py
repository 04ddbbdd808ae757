"""Order state changes driven by the processor's webhooks (delivered at least once)."""

from __future__ import annotations

import sqlite3

from .notifications import send_receipt


def on_payment_succeeded(db: sqlite3.Connection, order_id: str) -> None:
    """BUG: two deliveries of the same webhook both read 'pending' and both send a receipt."""
    (status,) = db.execute("SELECT status FROM orders WHERE id = ?", (order_id,)).fetchone()
    if status != "pending":
        return
    db.execute("UPDATE orders SET status = 'paid' WHERE id = ?", (order_id,))
    db.commit()
    send_receipt.delay(order_id)


def on_payment_succeeded_fixed(db: sqlite3.Connection, order_id: str) -> None:
    cursor = db.execute("UPDATE orders SET status = 'paid' WHERE id = ? AND status = 'pending'", (order_id,))
    db.commit()
    if cursor.rowcount == 0:
        return  # a duplicate delivery: the first one already sent the receipt
    send_receipt.delay(order_id)


def on_shipped(db: sqlite3.Connection, order_id: str) -> None:
    """BUG: a late 'shipped' event can move a delivered order back to shipped."""
    db.execute("UPDATE orders SET status = 'shipped' WHERE id = ?", (order_id,))
    db.commit()


def on_shipped_fixed(db: sqlite3.Connection, order_id: str) -> None:
    cursor = db.execute("UPDATE orders SET status = 'shipped' WHERE id = ? AND status = 'packed'", (order_id,))
    db.commit()
    if cursor.rowcount == 0:
        return  # duplicate or out of order: nothing to do


def on_refund_requested(db: sqlite3.Connection, order_id: str) -> None:
    """BUG: the conditional UPDATE's row count is ignored, so a duplicate refunds twice."""
    db.execute("UPDATE orders SET status = 'refunding' WHERE id = ? AND status = 'paid'", (order_id,))
    db.commit()
    issue_refund(order_id)


def issue_refund(order_id: str) -> None:
    """Stands in for the gateway call."""
