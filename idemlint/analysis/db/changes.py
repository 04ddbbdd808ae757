"""Writes that record a change rather than decide one.

`if new_email != user.email: user.email = new_email` tests whether the value it is given (or
looked up) differs from the one held, then stores exactly that value: every run that passes
stores the same thing, and a call that passes the change on (`backend.update_email(user)`,
`provider.update_account(source)`, a set by its verb, handed the record or the value) sets the
same thing again, so racing runs agree. Another act (`reassign_orders(user)`) still runs twice.
A fixed value is no change given (`if x.flag != "on": x.flag = "on"; mail(x)` decides to act
once), and a state column is not read this way: moving a lifecycle is a decision. And a call
that computes a written value through a local (`chosen = select_file(members)`, then `x.file =
chosen`) computes, as it would inline, when nothing but the writes and the tests deciding them
reads that local."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.records import reads_the_record
from idemlint.analysis.db.repeat_safe import absolute_value
from idemlint.analysis.syntax import conjuncts
from idemlint.knowledge.repeats import COMPUTING_WORDS, PASSING_ON_WORDS, names_a_read, names_an_action, words_of

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db.classify import DbAnalysis
    from idemlint.analysis.db.records import DbWrite
    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def records_a_change(model: ModuleModel, db: DbAnalysis, test: cst.BaseExpression, write: DbWrite) -> bool:
    """The write runs in the body of `if <value> != <record>.<column>:` (either side, `is not`
    too) and stores `<value>`, spelt the same, in each column it sets; no column is a state."""
    owner = model.parents.get(test)
    if type(owner) is not cst.If or not model.is_inside(write.node, owner.body) or not write.values:
        return False
    code = model.module.code_for_node
    for column, value in write.values.items():
        if (
            db.is_state_column(column)
            or absolute_value(model, value)  # a fixed value: a decision to act once
            or _built_from_the_record(
                model, value, write
            )  # `tags = [t for t in x.tags if t != tag]`: built from the row
            or not any(code(other) == code(value) for other in _compared_with(model, test, write.instance, column))
        ):
            return False
    return True


def _built_from_the_record(model: ModuleModel, value: cst.BaseExpression, write: DbWrite) -> bool:
    """The value reads the record written (`x.quantity - 1`), directly or through a local the
    function binds from it (`tags = [t for t in x.tags if t != tag]`): built on what was read.
    The record is its whole chain (`self.user`): `self.cleaned_data` is another object."""
    record = write.instance
    if not record:
        return True
    scope = model.scope_of(write.node)
    return reads_the_record(model, value, record) or any(
        b.value is not None and reads_the_record(model, b.value, record)
        for name in model.names_read(value)
        for b in model.bindings_of(scope, name)
        if b.kind == "assign"
    )


def _compared_with(
    model: ModuleModel, test: cst.BaseExpression, instance: str | None, column: str
) -> list[cst.BaseExpression]:
    """What `test` (or a part of an `and` of it) says `instance.column` differs from."""
    found = []
    for part in conjuncts(test):
        if type(part) is not cst.Comparison or len(part.comparisons) != 1:
            continue
        if type(part.comparisons[0].operator) not in (cst.NotEqual, cst.IsNot):
            continue
        left, right = part.left, part.comparisons[0].comparator
        for side, other in ((left, right), (right, left)):
            if (
                type(side) is cst.Attribute
                and side.attr.value.lower() == column
                and instance is not None
                and model.dotted(side.value) == instance
            ):
                found.append(other)
    return found


def computes_a_written_value(model: ModuleModel, call: cst.Call, deciding: set[int]) -> bool:
    """`chosen = select_file(members)`, a call named for reading or choosing, where every read of
    `chosen` in the function is inside a value the writes store or a test deciding them (`if
    chosen:`; `deciding` holds their ids): the call computes what is written. `url =
    cloud.provision_database(...)` acts."""
    statement = model.parents.get(call)
    if type(statement) is not cst.Assign or len(statement.targets) != 1:
        return False
    target = statement.targets[0].target
    if type(target) is not cst.Name:
        return False
    words = words_of((model.call_name(call) or "").rsplit(".", 1)[-1].lstrip("_"))
    if not names_a_read(words) and not (words and words[0] in COMPUTING_WORDS and not names_an_action("_".join(words))):
        return False
    reads = _reads_of(model, model.scope_of(call)).get(target.value, [])
    return bool(reads) and all(any(id(a) in deciding for a in (n, *model.ancestors(n))) for n in reads)


def _reads_of(model: ModuleModel, scope: cst.CSTNode) -> dict[str, list[cst.Name]]:
    """Each local's reads in a function, indexed once per function (each call of each write asks)."""
    memo = model.memo.setdefault("db.local_reads", {})
    if id(scope) not in memo:
        found: dict[str, list[cst.Name]] = {}
        for node in model.iter_nodes(scope):
            if type(node) is cst.Name and not _is_a_target(model, node):
                found.setdefault(node.value, []).append(node)
        memo[id(scope)] = found
    return memo[id(scope)]


def _is_a_target(model: ModuleModel, name: cst.Name) -> bool:
    """Not a read of the local: it is bound there, or it is an attribute's name (`x.chosen`)."""
    parent = model.parents.get(name)
    return (
        type(parent) is cst.AssignTarget
        or type(parent) in (cst.AugAssign, cst.AnnAssign)
        and parent.target is name  # type: ignore[union-attr]
        or type(parent) is cst.Attribute
        and parent.attr is name
    )


def passes_the_change_on(model: ModuleModel, call: cst.Call, writes: list[DbWrite]) -> bool:
    """`backend.update_email(user)`, `client.update_account(source.pk, name=source.name)`: a
    call named for setting, every argument of which is the record written, its key, the value
    it stores or the column written read back (not `update_stock(line.product_id, -delta)`)."""
    name = (model.call_name(call) or "").rsplit(".", 1)[-1]
    words = words_of(name.lstrip("_"))
    if not words or words[0] not in PASSING_ON_WORDS:
        return False
    code = model.module.code_for_node
    records = {w.instance for w in writes if w.instance}
    handed = (
        records
        | {f"{r}.{key}" for r in records for key in ("pk", "id")}
        | {f"{w.instance}.{c}" for w in writes for c in w.values if w.instance}
        | {code(v) for w in writes for v in w.values.values()}
    )
    return bool(call.args) and all((model.dotted(a.value) or code(a.value)) in handed for a in call.args)
