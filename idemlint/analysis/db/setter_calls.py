"""State setters called on a record (`order.set_status("paid")`) or on a service given one
(`svc.update_status(sub_id, ACTIVE)`): which column, which state, and whose record."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import chain_calls, chain_model, python_value_kind
from idemlint.analysis.db.object_records import uses_database
from idemlint.analysis.db.records import OWN_KEYS, SESSION, DbWrite
from idemlint.analysis.imports import late_import_target
from idemlint.analysis.model import ModuleModel, called_name, keyword
from idemlint.knowledge.orms import GET_OR_404, ROW_QUERY_METHODS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

_NOT_SETTERS = frozenset({"updatestate"})  # Celery's `update_state`/`updateState`, spelled without case or "_"
_STATE_WORD = re.compile(r"^[A-Za-z][A-Za-z0-9_ ]{0,40}$")  # Celery's progress report
_NOT_RECORDS = re.compile(r"(^|\.)(span|response|resp|request|handler|trace|current_span)$", re.IGNORECASE)


def _state_argument(model: ModuleModel, call: cst.Call) -> list[cst.BaseExpression]:
    """The positional argument that holds the state: an enum's member (`Status.FAILED`), else the
    first one-word literal (`update_status("failed", "Timeout")`), else a constant by its name,
    else the last argument (`update_status(sub_id, ACTIVE)`). A message after the state
    (`update_status(Status.FAILED, "Unknown error creating jobs")`) is not it."""
    positional = [a.value for a in call.args if a.keyword is None]
    kinds = [python_value_kind(model, v) for v in positional]
    members: list[cst.BaseExpression] = [
        v
        for v, (kind, _t) in zip(positional, kinds, strict=True)
        if kind == "constant" and isinstance(v, cst.Attribute)
    ]
    words = [
        v
        for v, (kind, text) in zip(positional, kinds, strict=True)
        if kind == "literal" and text.strip() and " " not in text.strip() and _STATE_WORD.match(text)
    ]
    named = [v for v, (kind, _t) in zip(positional, kinds, strict=True) if kind == "constant"]
    return members[-1:] or words[:1] or named[-1:] or positional[-1:]


def setter_write(
    model: ModuleModel, call: cst.Call, method: str, state_columns: frozenset[str], guarded_setters: frozenset[str]
) -> DbWrite | None:
    """`payment.change_status(PaymentStatus.CONFIRMED)`, `order.set_status("paid")`,
    `svc.update_subscription_status(sub_id, Status.Active)`: a state column written to a
    literal or constant through a method named for it. Integer arguments (an HTTP status)
    and calls that build a value (`span.set_status(Status(...))`) are not state writes."""
    receiver = call.func.value  # type: ignore[attr-defined]
    if method.replace("_", "").lower() in _NOT_SETTERS or _NOT_RECORDS.search(model.dotted(receiver) or ""):
        return None
    if not uses_database(model):
        return None  # a desktop app's channel, a worker's own state: nothing a database stores
    if any(
        keyword(call, k) is not None and python_value_kind(model, keyword(call, k).value)[1] == "False"  # type: ignore[union-attr]
        for k in ("commit", "save", "persist", "flush")
    ):
        return None  # `change_fraud_status(..., commit=False)` changes the instance only
    if keyword(call, "pipeline") is not None or keyword(call, "pipe") is not None:
        return None  # queued on a transaction the caller executes (and WATCHes): judged there
    # the longest state word the name ends with: `set_order_status` is `order_status` when that is
    # configured; `setStatus` is `status`
    named = method.lower()
    column = max((c for c in state_columns if named.endswith(c)), key=len, default="status")
    argument = keyword(call, "status") or keyword(call, "state") or keyword(call, "new_status")
    values = [argument.value] if argument else _state_argument(model, call)
    kinds = [python_value_kind(model, v) for v in values]
    if not kinds or kinds[0][0] not in ("literal", "constant") or isinstance(values[0], cst.Integer):
        return None
    if kinds[0][0] == "literal" and not _STATE_WORD.match(kinds[0][1]):
        return None  # `set_process_status("-active-")`: a process title, not a state
    instance = receiver.value if isinstance(receiver, cst.Name) else None
    positional = [a for a in call.args if a.keyword is None]
    if instance is not None and instance in model.imports and not _bound_otherwise(model, call, instance):
        # `crud.update_payment_status(db, payment=payment, status=...)`: a module's function,
        # given the record
        record = _record_argument(model, call, values[0])
        return _setter(model.statement_of(call), call, column, kinds[0], values[0], record, method in guarded_setters)
    # the state first is the receiver's own when the receiver is a record the function loaded
    # (`order.set_status(PAID, user)`) or only a note follows (`order.set_status(PAID, "by card")`);
    # after another argument (`svc.update_status(sub_id, ACTIVE)`), or before one on an object not
    # loaded as a row (`svc.update_status(ACTIVE, sub_id)`), the record is that argument
    states_first = (
        bool(positional)
        and positional[0].value is values[0]
        and (
            all(_is_a_note(a.value) for a in positional[1:])
            or instance is not None
            and not any(_names_a_key(a.value) for a in positional[1:])
            and _a_loaded_record(model, call, instance)
        )
    )
    on_record = instance is not None and (instance == "self" or len(positional) <= 1 or states_first)
    return _setter(
        model.statement_of(call),
        call,
        column,
        kinds[0],
        values[0],
        instance if on_record else None,
        method in guarded_setters,
    )


def _setter(
    statement: cst.CSTNode,
    call: cst.Call,
    column: str,
    kind: tuple[str, str],
    value: cst.BaseExpression,
    record: str | None,
    guarded: bool,
) -> DbWrite:
    """The write a setter call makes: on `record` where it names one, else a service's."""
    return DbWrite(
        call,
        statement,
        "setter" if record else "service",
        None,
        {column: kind},
        (),
        True,
        record,
        call=call,
        values={column: value},
        guarded=guarded,
    )


def _bound_otherwise(model: ModuleModel, call: cst.Call, name: str) -> bool:
    """The function binds `name` to something other than a module it imports late (`order =
    db.get(Order, pk)` shadowing `from app.crud import order`)."""
    return any(late_import_target(model, b.value) is None for b in model.bindings_of(model.scope_of(call), name))


def _record_argument(model: ModuleModel, call: cst.Call, state: cst.BaseExpression) -> str | None:
    """The argument a module's setter is given as its record: the one name (passed by that
    keyword or as itself) that the setter's own name spells and the function uses as an object
    (`payment` of `crud.update_payment_status(db, payment=payment, status=PAID)`, where it
    reads `payment.is_paid`); None where none or several are."""
    setter = called_name(call).lower()
    given = {
        a.value.value
        for a in call.args
        if a.value is not state
        and type(a.value) is cst.Name
        and not SESSION.search(a.value.value)
        and any(
            word and word in setter for word in (a.value.value.lower(), a.keyword.value.lower() if a.keyword else "")
        )
    }
    given |= _keyed(model, call)
    used = {
        node.value.value
        for node in model.iter_nodes(model.scope_of(call))
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value in given
    }
    return next(iter(used)) if len(used) == 1 else None


def _keyed(model: ModuleModel, call: cst.Call) -> set[str]:
    """The records a setter's key argument names: `transaction` for `transaction_id=
    transaction.id`, or for `transaction_id=transaction_id` after `transaction = await
    get_transaction(transaction_id=transaction_id)` (the function loaded it by that key)."""
    keys = {a.value.value for a in call.args if type(a.value) is cst.Name and _names_a_key(a.value)}
    named = {
        a.value.value.value
        for a in call.args
        if type(a.value) is cst.Attribute and type(a.value.value) is cst.Name and a.value.attr.value in OWN_KEYS
    }  # `transaction.id`, not `transaction.partner_id`: another row's key
    for node in model.iter_nodes(model.scope_of(call)) if keys else ():
        if type(node) is cst.Assign and len(node.targets) == 1 and type(node.targets[0].target) is cst.Name:
            value = node.value.expression if isinstance(node.value, cst.Await) else node.value
            if isinstance(value, cst.Call) and any(
                type(a.value) is cst.Name and a.value.value in keys for a in value.args
            ):
                named.add(node.targets[0].target.value)
    return named


def _a_loaded_record(model: ModuleModel, call: cst.Call, name: str) -> bool:
    """`order = Order.objects.select_for_update().get(pk=pk)`, `get_object_or_404(Order, ...)`
    or a view's `self.get_object()` in the function: a row it loaded, not a service object (nor
    a dict's entry, `SERVICES.get("billing")`)."""
    for binding in model.bindings_of(model.scope_of(call), name):
        value = binding.value
        if isinstance(value, cst.Await):
            value = value.expression
        if not isinstance(value, cst.Call):
            continue
        chain = chain_calls(value)
        methods = {c.func.attr.value for c in chain if isinstance(c.func, cst.Attribute)}
        root = model.dotted(value.func) or ""
        if methods & ROW_QUERY_METHODS and chain_model(model, chain) is not None and not root.split(".")[0].isupper():
            return True  # not a constant's entry: `SERVICES.get("billing")`
        called = model.call_name(value) or ""
        if called in GET_OR_404 or called.rpartition(".")[2] == "aget_object_or_404":
            return True
        if model.dotted(value.func) == "self.get_object":
            return True  # a view's own row
    return False


def _names_a_key(value: cst.BaseExpression) -> bool:
    """`item_id`, `pk`, `item.pk`: another record's key, whose record the state is then of
    (`order.update_item_status(SHIPPED, item_id)` moves the item, not the order)."""
    name = value.attr.value if isinstance(value, cst.Attribute) else value.value if isinstance(value, cst.Name) else ""
    return name in ("pk", "id", "uuid") or name.endswith(("_id", "_pk", "_uuid"))


def _is_a_note(value: cst.BaseExpression) -> bool:
    """Text written out, or a translation of it (`_("rejected by the customer")`)."""
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and len(value.args) == 1:
        value = value.args[0].value  # `_("...")`, `gettext("...")`
    return isinstance(value, (cst.SimpleString, cst.FormattedString, cst.ConcatenatedString))
