"""Which read decides a write: the tests that decide whether it runs, the read of the same
record each test looks at and on which columns, whether that read is locked, and which read
loaded the instance a write assigns to."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import chain_calls
from idemlint.analysis.db.object_records import assignments_to
from idemlint.analysis.db.records import IDENTITY, DbRead, DbWrite, record_name
from idemlint.analysis.db.scopes import source_order
from idemlint.analysis.flow import is_load, origin_nodes, runs_before
from idemlint.analysis.model import ModuleModel, local_callee, positional_parameters, string_value
from idemlint.analysis.retry import always_leaves

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db.classify import DbAnalysis
    from idemlint.analysis.sql import Predicate
else:
    cst = LazyModule("libcst", globals(), "cst")


def decisions(model: ModuleModel, db: DbAnalysis, write: DbWrite) -> Iterator[tuple[DbRead, cst.BaseExpression]]:
    """(read, test) pairs where a test on a read of the same record decides the write."""
    scope = model.scope_of(write.node)
    scope_reads = [r for r in _reads_by_scope(model, db).get(id(scope), ()) if same_record(r, write)]
    if not scope_reads:
        return
    written_from = {id(n) for value in write.values.values() for n in origin_nodes(model, value) if type(n) is cst.Call}
    for test in deciding_tests(model, write.node):
        origins = set(origin_nodes(model, test))
        for read in scope_reads:
            if read.call in origins or _tests_a_field(model, read, test, origins):
                yield read, test
            elif read.instance == "self" and any(
                type(n) is cst.Call and _columns_a_query_returns(model, n) for n in origins
            ):
                yield read, test
            elif any(id(n) in written_from and _computes_from(n, read.instance) for n in origins):
                yield read, test  # `new = next_status(order); if new is None: return; order.status = new`


def _reads_by_scope(model: ModuleModel, db: DbAnalysis) -> dict[int, list[DbRead]]:
    """The analysis's reads by the scope they are made in, indexed once per analysis."""
    memo = model.memo.setdefault("db.reads_by_scope", {})
    index: dict[int, list[DbRead]] | None = memo.get(id(db))
    if index is None:
        index = {}
        for read in db.reads:
            index.setdefault(id(model.scope_of(read.call)), []).append(read)
        memo[id(db)] = index
    return index


def _tests_a_field(model: ModuleModel, read: DbRead, test: cst.BaseExpression, origins: set[cst.CSTNode]) -> bool:
    """The test reads a field of the read's record: one the function did not load (`order.status`
    of a parameter, `self.round.status`), or one it loaded into an attribute of `self` before the
    test (`self.order = Order.objects.get(...)`, then `if self.order.status ...`)."""
    if not (
        read.record or read.instance and read.instance.startswith("self.") and _comes_first(model, read.call, test)
    ):
        return False
    return any(_field_of(model, n, read.instance) for n in origins)


def _comes_first(model: ModuleModel, read: cst.CSTNode, test: cst.CSTNode) -> bool:
    """The read is written before the test in the function (in a `try`, a branch), as a name's
    binding is followed wherever it is made."""
    position = source_order(model, model.scope_of(test))
    return 0 <= position.get(read, -1) < position.get(test, -1)


def _computes_from(call: cst.CSTNode, instance: str | None) -> bool:
    """A call given the instance itself: `determine_order_status_change(order, decision)`."""
    return (
        type(call) is cst.Call
        and instance is not None
        and any(type(a.value) is cst.Name and a.value.value == instance for a in call.args)
    )


def _field_of(model: ModuleModel, node: cst.CSTNode, instance: str | None) -> bool:
    """`order.status` (not `order.save()`, not `order._state`) for the named instance."""
    if type(node) is not cst.Attribute or instance is None or record_name(node.value) != instance:
        return False
    parent = model.parents.get(node)
    return not (type(parent) is cst.Call and parent.func is node) and not node.attr.value.startswith("_")


def deciding_tests(model: ModuleModel, node: cst.CSTNode) -> list[cst.BaseExpression]:
    """Tests that decide whether `node` runs: enclosing `if`s, and earlier `if`s in the
    same or an enclosing block whose body leaves (`if order.paid: return`)."""
    return [test for _refuses, test in guarding_tests(model, node)]


def guarding_tests(model: ModuleModel, node: cst.CSTNode) -> Iterator[tuple[bool, cst.BaseExpression]]:
    """`deciding_tests`, each with whether it is an earlier `if` whose body leaves (a refusal
    the node runs past) rather than an `if` that holds the node."""
    child = node
    for ancestor in model.ancestors(node):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            break
        if isinstance(ancestor, cst.If) and child is not ancestor.test:
            yield False, ancestor.test
        if isinstance(ancestor, (cst.IndentedBlock, cst.Module)):
            for previous in ancestor.body:
                if previous is child:
                    break
                if isinstance(previous, cst.If) and always_leaves(list(previous.body.body), or_continues=True):
                    yield True, previous.test
        child = ancestor


def same_record(read: DbRead, write: DbWrite) -> bool:
    if write.kind in ("attribute", "setter"):
        return write.instance is not None and write.instance == read.instance
    return read.table is not None and write.table is not None and _singular(read.table) == _singular(write.table)


def _singular(table: str) -> str:
    return table[:-1] if table.endswith("s") else table


def decided_columns(model: ModuleModel, test: cst.BaseExpression, read: DbRead) -> tuple[str, ...]:
    """The columns a test looks at: `order.status`, a name unpacked from the row
    (`status, total = cur.fetchone()`), `row["status"]`, a local computed from the record's
    fields (`old = self.status; allowed = MOVES.get(old, ())`), or the filter of an `exists()`.
    An existence check (`if order is None`) looks at no column, unless the read found the
    row by its state (`filter(pk=pk, status="pending").first()`): then at that state."""
    columns: list[str] = []
    read_names = {
        b.name
        for names in model.bindings.get(model.scope_of(read.call), {}).values()
        for b in names
        if b.value is not None and (b.value is read.call or model.is_inside(read.call, b.value))
    }
    for node in (test, *model.iter_nodes(test)):
        if type(node) is cst.Attribute and read.instance is not None and record_name(node.value) == read.instance:
            parent = model.parents.get(node)
            if type(parent) is cst.Call and parent.func is node:
                # `if profile.send_report():` decides on what a method did, not on a column;
                # `if new not in self.available_statuses():` on the columns the query returns
                columns.extend(_columns_a_query_returns(model, parent))
                continue
            columns.append(node.attr.value.lower())
        elif type(node) is cst.Name and node.value in read_names:
            parent = model.parents.get(node)
            if type(parent) is cst.Subscript:
                index = parent.slice[0].slice if parent.slice else None
                key = string_value(index.value) if isinstance(index, cst.Index) else None
                columns.extend([key.lower()] if key else read.columns)
            elif type(parent) is cst.Attribute and parent.value is node:
                continue
            elif node.value != read.instance or _compared_to_value(model, node):
                # `status, total = cur.fetchone()`: the name, and the SELECT's columns it came from
                columns.extend([node.value.lower(), *read.columns])
            elif read.filters:
                # `order = Order.objects.filter(pk=pk, status="pending").first(); if order:` finds
                # the row only while it is pending: the test decides on the state the read filtered by
                columns.extend(c for c in _condition_columns(model, read) if c in model.vocabulary.state_columns)
        elif node is read.call or type(node) is cst.Call and model.is_inside(read.call, node):
            # `if Order.objects.filter(..., status="paid").exists():` decides on the condition filters;
            # a lookup by identity or by a related object (`filter(oob_ip=instance)`) only finds the row
            columns.extend(_condition_columns(model, read) if read.filters else read.columns)
        elif type(node) is cst.Name and read.instance is not None and is_load(model, node):
            columns.extend(_fields_held(model, node, read.instance))  # `old = self.status`, then `if new == old:`
    for node in origin_nodes(model, test):
        if type(node) is cst.Call and node is not read.call and _computes_from(node, read.instance):
            # `new = next_status(order)`: the helper decides the state columns it feeds
            columns.extend(c for c in _columns_fed_by(model, node) if c in model.vocabulary.state_columns)
    return tuple(dict.fromkeys(columns))


def _fields_held(model: ModuleModel, name: cst.Name, instance: str, depth: int = 0) -> list[str]:
    """The record's fields a local holds, where every binding of it is one (`old = self.status`)
    or a lookup keyed by another such local (`allowed = MOVES.get(old, ())`, `MOVES[old]`); not
    what a call computes from the record (`provider_factory(self.variant, self)`)."""
    bindings = model.bindings_of(model.scope_of(name), name.value) if depth < 3 else []
    fields: list[str] = []
    for binding in bindings:
        value = binding.value
        if binding.kind in ("param", "def") or value is None:
            return []
        if type(value) is cst.Attribute and record_name(value.value) == instance:
            fields.append(value.attr.value.lower())
            continue
        key = None
        if (
            type(value) is cst.Call
            and type(value.func) is cst.Attribute
            and value.func.attr.value == "get"
            and value.args
        ):
            key = value.args[0].value
        elif type(value) is cst.Subscript and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index):
            key = value.slice[0].slice.value
        held = _fields_held(model, key, instance, depth + 1) if type(key) is cst.Name else []
        if not held:
            return []
        fields += held
    return fields


# Methods of a field's value that only read it (`self.pipeline.get(self.status, ())`)
_READ_ONLY = frozenset({"get", "keys", "values", "items", "index", "count", "startswith", "endswith", "lower", "upper"})


def _columns_a_query_returns(model: ModuleModel, call: cst.Call) -> list[str]:
    """`self.available_statuses()` where the class's method only returns something computed
    from its own fields (`return self.pipeline.get(self.status, ())`): those fields. A method
    that writes to `self` or calls anything reached from it (`self.save()`, `self.gateway.fetch()`)
    does more than read, and decides nothing here."""
    receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
    if not isinstance(receiver, cst.Name) or receiver.value != "self":
        return []
    return _fields_returned(model, call, frozenset()) or []


def _fields_returned(
    model: ModuleModel, call: cst.Call, seen: frozenset[cst.FunctionDef], depth: int = 0
) -> list[str] | None:
    """The own fields the method `self.<name>()` returns, following the class's other methods it
    returns (`def can_pay(self): return self.is_approved()`, up to _MAX_PREDICATE_DEPTH deep);
    None when it writes to `self`, calls a method of something `self` holds (`self.gateway.fetch()`)
    or a method of its own that does, or returns nothing. Answers are kept per method."""
    method = local_callee(model, call)
    if method is None or method in seen or depth > _MAX_PREDICATE_DEPTH:
        return None
    known: dict[int, list[str] | None] = model.memo.setdefault("db.fields_returned", {})
    if id(method) not in known:
        known[id(method)] = _read_fields(model, method, seen | {method}, depth)
    return known[id(method)]


_MAX_PREDICATE_DEPTH = 8


def _read_fields(
    model: ModuleModel, method: cst.FunctionDef, seen: frozenset[cst.FunctionDef], depth: int
) -> list[str] | None:
    returned: list[str] = []
    answers = False  # a method that returns nothing (`save()` calling `super().save()`) is no predicate
    for node in model.iter_nodes(method.body):
        if type(node) is cst.Attribute and type(node.value) is cst.Name and node.value.value == "self":
            parent = model.parents.get(node)
            if type(parent) in (cst.AssignTarget, cst.AugAssign):
                return None
            if type(parent) is cst.Call and parent.func is node:
                # `self.is_approved()`: a read only if that method of the class reads, too
                inner = _fields_returned(model, parent, seen, depth + 1)
                if inner is None:
                    return None
                returned.extend(inner)
        elif type(node) is cst.Call and (model.dotted(node.func) or "").startswith("self."):
            if isinstance(node.func, cst.Attribute) and isinstance(node.func.value, cst.Name):
                continue  # `self.method()`, judged above
            if not (isinstance(node.func, cst.Attribute) and node.func.attr.value in _READ_ONLY):
                return None  # `self.gateway.fetch(...)`: a call, not a read of a field
        elif type(node) is cst.Return and node.value is not None:
            answers = True
            returned.extend(
                n.attr.value.lower()
                for n in (node.value, *model.iter_nodes(node.value))
                if type(n) is cst.Attribute
                and type(n.value) is cst.Name
                and n.value.value == "self"
                and not n.attr.value.startswith("_")
                and not n.attr.value.isupper()  # `self.APPROVED`: a constant of the class, not a field
                and type(model.parents.get(n)) not in (cst.Attribute, cst.Call)  # `self.pipeline.get`, `self.is_paid()`
            )
    return returned if answers else None


def _columns_fed_by(model: ModuleModel, call: cst.Call) -> set[str]:
    """The attributes assigned from a call's result in its function (`order.status = new`)."""
    scope = model.scope_of(call)
    found = set()
    for target, value, _statement in model.attribute_assigns:
        if model.scope_of(target) is scope and any(n is call for n in origin_nodes(model, value)):
            found.add(target.attr.value.lower())
    return found


def _condition_columns(model: ModuleModel, read: DbRead) -> list[str]:
    return [
        p.column
        for p in read.filters
        if p.value in ("literal", "bool", "null")
        or p.op in ("is", "lt", "gt")
        or p.column in model.vocabulary.state_columns
    ]


def _compared_to_value(model: ModuleModel, name: cst.Name) -> bool:
    """`status != "created"` looks at a value; `order is None` and `not order` only at existence."""
    parent = model.parents.get(name)
    if type(parent) is not cst.Comparison:
        return False
    others = [parent.left, *(c.comparator for c in parent.comparisons)]
    return any(o is not name and not (type(o) is cst.Name and o.value == "None") for o in others)


def decides_state(columns: tuple[str, ...]) -> bool:
    """A decision on something that changes (a status, a balance, a flag), not on who
    owns the row or whether it exists."""
    return any(not IDENTITY.search(c) for c in columns)


def moves_its_flag(write: DbWrite, condition: Predicate) -> bool:
    """`filter(pk=i, is_finished=False).update(state=..., is_finished=True)`: the update sets a
    flag its filter tests to a literal, so it applies to a row once, never after."""
    kind, _text = write.sets.get(condition.column, ("", ""))
    return condition.op == "eq" and condition.value in ("bool", "null") and kind in ("bool", "null")


def loaded_read(model: ModuleModel, db: DbAnalysis, write: DbWrite) -> DbRead | None:
    """For `order.status = ...`: the read that loaded `order`, if that is what the name
    holds at this point (not a row created or re-assigned in between)."""
    scope = model.scope_of(write.node)
    for read in db.reads:
        if (
            read.instance == write.instance
            and model.scope_of(read.call) is scope
            and latest_binding_is(model, write, read)
        ):
            return read
    return None


def latest_binding_is(model: ModuleModel, write: DbWrite, read: DbRead) -> bool:
    if read.record == "held":
        return True  # a record the object holds: the method never sets it (`instances._held_anchor`)
    scope = model.scope_of(write.node)
    position = source_order(model, scope)
    at = position.get(write.node, 0)
    if write.instance and write.instance.startswith("self."):  # `self.order = Order.objects.get(...)`
        assigned = [  # `self.order = ...`: an assignment to the attribute that holds the record
            (position.get(statement, -1), value)
            for target, value, statement in assignments_to(model, scope, write.instance.rpartition(".")[0])
            if target.attr.value == write.instance.rpartition(".")[2]
        ]
        before = [a for a in assigned if a[0] < at]
        return bool(before) and model.is_inside(read.call, max(before, key=lambda a: a[0])[1])
    latest = None
    for binding in model.bindings_of(scope, write.instance or ""):
        where = position.get(binding.statement, -1)
        if where < at and (latest is None or where > position.get(latest.statement, -1)):
            latest = binding
    if read.record:
        return latest is not None and (latest.statement is read.call or latest.value is read.call)
    return latest is not None and latest.value is not None and model.is_inside(read.call, latest.value)


def validated_first(model: ModuleModel, read: DbRead, node: cst.CSTNode, column: str) -> bool:
    """A helper of this module, called before `node` on every way to it, tests the record's
    `column` and raises when it is not as wanted: given the record (`check_identity(identity)`)
    or giving it back (`match = self.validate_request(pk)` after `if match.status != PENDING:
    raise ...`). The state is tested first, as if written inline."""
    record = read.instance
    scope = model.enclosing_function(node)
    if not record or scope is None:
        return False
    for call in model.calls:
        if model.enclosing_function(call) is not scope or not runs_before(model, call, node):
            continue
        callee = local_callee(model, call)
        if callee is None:
            continue
        if _raises_unless_the_state(model, callee, column, _names_of_the_record(model, call, callee, record)):
            return True
    return False


def _names_of_the_record(model: ModuleModel, call: cst.Call, callee: cst.FunctionDef, record: str) -> set[str]:
    """What the helper calls the record: the parameter it is passed as (`check(order)` into
    `def check(o)`), or the names it returns when the call's result is the record
    (`order = self.validate(pk)` after `return match`)."""
    names: set[str] = set()
    positional = positional_parameters(model, callee)
    for index, arg in enumerate(a for a in call.args if a.keyword is None and not a.star):
        if record_name(arg.value) == record and index < len(positional):
            names.add(positional[index])
    for arg in call.args:
        if arg.keyword is not None and record_name(arg.value) == record:
            names.add(arg.keyword.value)
    assign = model.parents.get(call)
    if isinstance(assign, cst.Assign) and any(
        isinstance(t.target, cst.Name) and t.target.value == record for t in assign.targets
    ):
        names |= {r.value.value for r in model.returns.get(callee, ()) if isinstance(r.value, cst.Name)}
    return names


def _raises_unless_the_state(model: ModuleModel, function: cst.FunctionDef, column: str, names: set[str]) -> bool:
    """`if identity.status != "enabled": raise ...` in the helper, on the record itself (not
    `order.customer.status`, nor another parameter's state)."""
    for node in model.iter_nodes(function.body):
        if not isinstance(node, cst.If) or not names:
            continue
        last = node.body.body[-1] if node.body.body else None
        if not (isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, cst.Raise) for s in last.body)):
            continue
        if any(
            isinstance(n, cst.Attribute)
            and n.attr.value == column
            and isinstance(n.value, cst.Name)
            and n.value.value in names
            for n in (node.test, *model.iter_nodes(node.test))
        ):
            return True
    return False


def via_manager(
    model: ModuleModel, call: cst.CSTNode | None, column: str, filters: Mapping[str, Mapping[str, frozenset[str]]]
) -> bool:
    """The query runs through a manager that filters every query on `column`
    (`PendingHousehold.objects.filter(...)`, `objects = PendingManager()`), also by way of a
    name the query was assigned to once (`rows = PendingHousehold.objects.filter(...)`, then
    `rows.update(...)`): a precondition the call does not spell (`analysis/managers.py`)."""
    chain = chain_calls(call) if isinstance(call, cst.Call) else []
    root = chain[-1].func if chain else None
    if isinstance(root, cst.Attribute) and isinstance(root.value, cst.Name) and filters:
        held = model.sole_value(root.value)
        chain = chain_calls(held) if isinstance(held, cst.Call) else []
        root = chain[-1].func if chain else None
    if not isinstance(root, cst.Attribute) or not isinstance(root.value, cst.Attribute):
        return False
    manager = root.value
    if not isinstance(manager.value, cst.Name):
        return False
    return column in filters.get(manager.value.value.lower(), {}).get(manager.attr.value, frozenset())
