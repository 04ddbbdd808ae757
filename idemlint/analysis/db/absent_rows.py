"""Check-then-insert: a query finds a row absent, and the function inserts it.

The read-decide-write of a row that does not exist yet: two runs of the same request (a
double submit, a redelivered message) both find no row and both insert one, unless something
only one of them can pass stands between the query and the insert:
- the database keeps the queried columns, or the inserted row's, unique
  (`analysis/unique_keys.py`), so the second insert fails (a model the project does not define is not judged: its keys are unknown);
- the insert handles that failure (`except IntegrityError:`), or is a create-if-absent
  (`get_or_create`, which is not an insert here);
- the query locks (`select_for_update()`, `with_for_update()`).
A query whose filter takes a condition built elsewhere (`filter(conditions)`, a `Q` held in a
name) names columns we cannot read, perhaps a unique key: it is not judged.

The decision is an `if` on the query's result (`if existing: return`, `if not qs.exists():`,
`if count == 0:`) after which, on the "absent" side only, the function inserts: a model's
`objects.create()` / `bulk_create()`, a constructed instance's `save()`, or `session.add()`,
itself or through a function of the project whose summary says it inserts that model's row
(`copy.lend_to(member)`; `inserted_rows` is where those summaries start). The query may go
through a reverse manager a foreign key names (`copy.loans.filter(member=member)`: the loan's
`copy` key is one more filter). An insert of another model than the one queried is another
row, and is left alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import chain_calls
from idemlint.analysis.db.locks import row_locked_first
from idemlint.analysis.db.made_rows import finds_only_rows_made_here
from idemlint.analysis.db.records import SESSION, DbRead
from idemlint.analysis.db.related_managers import Related, instance_root, manager_owner, related_manager
from idemlint.analysis.db.scopes import source_order, statements_after
from idemlint.analysis.flow import runs_before
from idemlint.analysis.keys import fresh_value_name
from idemlint.analysis.model import string_value
from idemlint.analysis.retry.exits import always_leaves
from idemlint.analysis.summary_records import Chain, Step
from idemlint.analysis.unique_keys import kept_unique
from idemlint.knowledge.orms import CREATES_A_ROW

if TYPE_CHECKING:
    import libcst as cst

    # whether a call of a project function inserts a row of a model (from its summary): the chain
    # down to that insert, () when its summary shows the way to another, None when it inserts none
    InsertedBy = Callable[[cst.Call, str], Chain | None]

    from idemlint.analysis.db import DbAnalysis
    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")

_CREATES = CREATES_A_ROW | {"bulk_create", "abulk_create"}
RELATED_MARK = "~"  # an insert through a reverse manager, named by the manager until the project resolves it
_ADDS = frozenset({"add", "add_all"})


@dataclass(frozen=True)
class AbsentRowInsert:
    insert: cst.Call  # the insert (report here)
    read: DbRead  # the query that found no row
    test: cst.If  # the decision on its result
    model: str | None  # the inserted model, when known
    chain: Chain | None = None  # through a function of the project: the calls down to its insert, when known


def absent_row_inserts(
    model: ModuleModel,
    db: DbAnalysis,
    unique_keys: Mapping[str, tuple[frozenset[str], ...]],
    inserted_by: InsertedBy | None = None,
    related: Related = MappingProxyType({}),
) -> Iterator[AbsentRowInsert]:
    """See the module's docstring; `inserted_by` says what a call of a project function
    inserts (`run.add_execution(case)` inserts an execution row, from its summary)."""
    for read in db.reads:
        if read.locked or read.record or not read.table or not read.filters:
            continue
        keys = unique_keys.get(read.table)
        if keys is None or kept_unique(keys, (p.column for p in read.filters)):
            continue  # a model the project does not define (its keys unknown), or a unique key
        if _hides_columns(read.call):
            continue  # `filter(q)` with a `Q` built elsewhere: the columns it names, perhaps a unique key, are unknown
        decision = _decision_on(model, read)
        if decision is None:
            continue
        test, absent_side = decision
        owner = manager_owner(read.call, related) if isinstance(read.call, cst.Call) else None
        if owner is not None and not _loaded_here(model, db, owner[0]):
            continue  # the parent row came from a caller or a helper: its lock, if any, is out of view
        followed = inserted_by if owner is not None else None  # a helper's insert, only under a parent in view
        for insert, inserted, chain in _inserts_after(model, absent_side, read.table, followed, related):
            if inserted is not None and inserted != read.table:
                continue  # another model's row
            if _handles_duplicates(model, insert, test) or row_locked_first(model, db, read, insert):
                continue  # the duplicate error handled, or a row lock every duplicate takes first
            if isinstance(read.call, cst.Call) and finds_only_rows_made_here(model, read.call, insert):
                continue  # keyed on a row this run made: a duplicate run finds (and fills) its own
            if chain is not None and any(keys):
                continue  # a project function's insert, of a model with a unique key its columns may name
            if chain is None and kept_unique(keys, _inserted_columns(model, insert, related)):
                break  # the row it inserts is kept unique (`Intake(name=..., project=...)`): a second insert fails
            yield AbsentRowInsert(insert, read, test, inserted, chain)
            break


def _loaded_here(model: ModuleModel, db: DbAnalysis, name: cst.Name) -> bool:
    """`name` holds only a row the function loaded itself, without a lock (`copy =
    Copy.objects.get(pk=pk)`): no caller or helper may hold that row's lock around the query."""
    scope = model.scope_of(name)
    bindings = model.bindings_of(scope, name.value)
    loads = {
        id(r.call) for r in db.reads if not r.locked and r.instance == name.value and model.scope_of(r.call) is scope
    }
    return bool(bindings) and all(
        b.value is not None and any(id(n) in loads for n in (b.value, *model.iter_nodes(b.value))) for b in bindings
    )


def _inserts_after(
    model: ModuleModel,
    absent_side: list[cst.CSTNode],
    table: str,
    inserted_by: InsertedBy | None,
    related: Related,
) -> Iterator[tuple[cst.Call, str | None, Chain | None]]:
    """The inserts on the absent side: its own first (no chain), then the calls of project
    functions that insert a `table` row (the chain to it)."""
    for insert, inserted in inserts_in(model, absent_side, related):
        yield insert, inserted, None
    if inserted_by is None:
        return
    for root in absent_side:
        for node in (root, *model.iter_nodes(root)):
            if isinstance(node, cst.Call) and _inserted_by(model, node) is False:
                chain = inserted_by(node, table)
                if chain is not None:
                    yield node, table, chain


def _hides_columns(call: cst.CSTNode) -> bool:
    """A filter of the query takes a condition built elsewhere (`filter(conditions)`, `filter(self.q)`),
    not keywords, an inline `Q(...)` or a comparison: the columns it names are unknown."""
    if not isinstance(call, cst.Call):
        return False
    return any(
        isinstance(link.func, cst.Attribute)
        and link.func.attr.value in ("filter", "exclude", "get", "where", "filter_by")
        and any(arg.keyword is None and arg.star == "" and _held_condition(arg.value) for arg in link.args)
        for link in chain_calls(call)
    )


def _held_condition(value: cst.BaseExpression) -> bool:
    """`conditions`, `self.q`, `filters[0]`: a value a name holds; not a model's column
    (`Vote.active`, a boolean condition of SQLAlchemy)."""
    root = value
    while isinstance(root, (cst.Attribute, cst.Subscript)):
        root = root.value
    return isinstance(root, cst.Name) and (root is value or not root.value[:1].isupper())


def _decision_on(model: ModuleModel, read: DbRead) -> tuple[cst.If, list[cst.CSTNode]] | None:
    """The `if` on the query's result and the statements that run only when no row was found."""
    result = read.instance  # `existing = ...first()`
    for node in model.ancestors(read.call):
        if isinstance(node, cst.If) and model.is_inside(read.call, node.test):
            return _absent_side(model, node, _says_found(model, node.test, read.call))
        if isinstance(node, (cst.FunctionDef, cst.SimpleStatementLine)):
            break
    if result is None:
        return None
    function = model.enclosing_function(read.call)
    if function is None:
        return None
    for node in model.iter_nodes(function.body):
        if isinstance(node, cst.If) and result in model.names_read(node.test) and starts_after(model, read.call, node):
            return _absent_side(model, node, _says_found(model, node.test, None, result))
    return None


def _says_found(
    model: ModuleModel, test: cst.BaseExpression, call: cst.CSTNode | None, name: str | None = None
) -> bool | None:
    """Whether the test is true when the row was found (`if existing:`, `qs.exists()`,
    `count > 0`) or when it was not (`not existing`, `is None`, `== 0`); None otherwise."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _says_found(model, test.expression, call, name)
        return None if inner is None else not inner
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        operator, right = target.operator, target.comparator
        if isinstance(right, cst.Name) and right.value == "None":
            if isinstance(operator, cst.Is):
                return False
            if isinstance(operator, cst.IsNot):
                return True
        if isinstance(right, cst.Integer) and right.value == "0":
            if isinstance(operator, cst.Equal):
                return False
            if isinstance(operator, (cst.GreaterThan, cst.NotEqual)):
                return True
        return None
    if call is not None and test is call:
        return True
    if name is not None and isinstance(test, cst.Name) and test.value == name:
        return True
    return None


def _absent_side(model: ModuleModel, decision: cst.If, found: bool | None) -> tuple[cst.If, list[cst.CSTNode]] | None:
    if found is None:
        return None
    if found is False:
        return decision, [decision.body]
    if decision.orelse is not None and not isinstance(decision.orelse, cst.If):
        return decision, [decision.orelse]
    if not always_leaves(list(decision.body.body)):
        return None  # the "found" side goes on to the same code: not a decision to insert
    after = statements_after(model, decision)
    return (decision, after) if after is not None else None


def inserts_in(
    model: ModuleModel, roots: list[cst.CSTNode], related: Related = MappingProxyType({})
) -> Iterator[tuple[cst.Call, str | None]]:
    """The inserts in these statements: (the call, the model inserted when known). One through
    a reverse manager (`run.executions.create(...)`) counts where `related` names its model."""
    for root in roots:
        for node in (root, *model.iter_nodes(root)):
            if isinstance(node, cst.Call) and (inserted := resolved(_inserted_by(model, node), related)) is not False:
                yield node, inserted


def resolved(inserted: str | None | Literal[False], related: Related) -> str | None | Literal[False]:
    """The model a reverse manager's insert (`~executions`, as `_inserted_by` marks it before the
    project's related names are known) inserts, by the project's related names; False when
    they do not name it (`self.client.create(...)` is no insert)."""
    if inserted and inserted.startswith(RELATED_MARK):
        found = related.get(inserted[len(RELATED_MARK) :])
        return found[0] if found is not None else False
    return inserted


def _inserted_by(model: ModuleModel, call: cst.Call) -> str | None | Literal[False]:
    """The model (lower-cased; None when unknown) a call inserts a row of: a model's
    `objects.create()`, `session.add(Model(...))`, a constructed instance's `save()`, or a
    reverse manager's marked name (`run.executions.create()`: `~executions`); False for any
    other call."""
    if not isinstance(call.func, cst.Attribute):
        return False
    method = call.func.attr.value
    receiver = call.func.value
    if method in _CREATES and isinstance(receiver, cst.Attribute) and receiver.attr.value == "objects":
        return (model.dotted(receiver.value) or "").rsplit(".", 1)[-1].lower() or None
    if method in _CREATES and isinstance(receiver, cst.Attribute) and receiver.attr.value[:1].islower():
        if instance_root(receiver.value) is not None:
            return RELATED_MARK + receiver.attr.value
    if method in _ADDS and SESSION.search(model.dotted(receiver) or "") and call.args:
        return _constructed_model(model, call.args[0].value)
    if method == "save" and isinstance(receiver, cst.Name):
        return _constructed_model(model, receiver) or False
    return False


def inserted_rows(model: ModuleModel) -> dict[cst.CSTNode, tuple[tuple[str, ...], Chain]]:
    """The functions that insert a row of a known model on some way through them, where no
    handler of theirs takes the duplicate error (`except IntegrityError:`): {function: (the
    models, the first first; the chain to the first insert)}. Their callers inherit them
    (`Summary.inserts_row`)."""
    found: dict[cst.CSTNode, tuple[tuple[str, ...], Chain]] = {}
    for call in model.calls:
        scope = model.scope_of(call)
        inserted = _inserted_by(model, call) if type(scope) is cst.FunctionDef else None
        if not inserted or _handles_duplicates(model, call, scope):
            continue
        models, chain = found.get(scope, ((), (Step(f"{model.module.code_for_node(call.func)}()", call),)))
        if inserted not in models:
            found[scope] = ((*models, inserted), chain)
    return found


def unique_insert_first(
    model: ModuleModel, test: cst.CSTNode, node: cst.CSTNode, unique_keys: Mapping[str, tuple[frozenset[str], ...]]
) -> bool:
    """Between the test that decides it and `node`, on every way there (or in the value `node`
    stores: `query.check = Check.objects.create(...)`, not in one arm of a conditional), the
    function inserts a row the database keeps unique, by values a duplicate gives too: a racing
    duplicate that passed the same test fails at its insert (`IntegrityError`) before it
    reaches the write."""
    scope = model.scope_of(node)
    position = source_order(model, scope)
    low, high = position.get(test, -1), position.get(node, -1)
    for insert, inserted in inserts_in(model, [scope]):
        keys = unique_keys.get(inserted or "")
        first = (
            model.is_inside(insert, node)
            and not any(isinstance(a, (cst.IfExp, cst.BooleanOperation)) for a in model.ancestors(insert, until=node))
            or low < position.get(insert, -1) < high
            and runs_before(model, insert, node)
        )
        if keys and first and kept_unique(keys, _inserted_columns(model, insert)):
            return True
    return False


def _inserted_columns(model: ModuleModel, insert: cst.Call, related: Related = MappingProxyType({})) -> list[str]:
    """The columns the insert gives what a duplicate run gives them too: `create(a=..., b=...)`'s
    keywords (and the keys of a dict it spreads, `create(**defaults)` of `defaults = {"name":
    ...}`), or those of the `Model(a=..., b=...)` it adds or saves, and the key a reverse
    manager's `create` fills (`copy.holds.create(member=m)` gives `copy`); not one given what a
    call makes (`reference=uuid4().hex`, `created=now()`): two runs insert two values, and a key
    on that column stops neither."""
    built: cst.BaseExpression | None = insert
    method = insert.func.attr.value if isinstance(insert.func, cst.Attribute) else ""
    manager = (
        related_manager(model, insert.func.value, related)
        if method in _CREATES and isinstance(insert.func, cst.Attribute)
        else None
    )
    keyed = sorted(manager[1]) if manager is not None else []
    if method in _ADDS and insert.args:
        built = insert.args[0].value
    elif method == "save" and isinstance(insert.func, cst.Attribute):
        built = insert.func.value
    if isinstance(built, cst.Name):
        built = model.sole_value(built)
    if not isinstance(built, cst.Call):
        return keyed
    named = keyed + [
        a.keyword.value for a in built.args if a.keyword is not None and _same_on_every_run(model, a.value)
    ]
    for spread in (a.value for a in built.args if a.star == "**" and isinstance(a.value, cst.Name)):
        held = model.sole_value(spread)
        if isinstance(held, cst.Dict):
            named += [
                key
                for e in held.elements
                if isinstance(e, cst.DictElement)
                and (key := string_value(e.key))
                and _same_on_every_run(model, e.value)
            ]
    return named


def _same_on_every_run(model: ModuleModel, value: cst.BaseExpression, depth: int = 0) -> bool:
    """A value a duplicate run gives too: nothing in it makes a new random value or reads the
    clock (`uuid4()`, `secrets.token_hex()`, `now()`; `analysis/keys.fresh_value_name`), also
    through a name assigned once (`reference = uuid4().hex`, then `reference=reference`)."""
    for node in (value, *model.iter_nodes(value)):
        if isinstance(node, cst.Call) and fresh_value_name(model, node) is not None:
            return False
        if isinstance(node, cst.Name) and depth < 3:
            held = model.sole_value(node)
            if held is not None and held is not value and not _same_on_every_run(model, held, depth + 1):
                return False
    return True


def _constructed_model(model: ModuleModel, expr: cst.BaseExpression) -> str | None:
    """`Model(...)`, or a name bound once to it in the function: the model, lower-cased."""
    if isinstance(expr, cst.Name):
        expr = model.sole_value(expr) or expr
    if isinstance(expr, cst.Call):
        name = (model.dotted(expr.func) or "").rsplit(".", 1)[-1]
        if name[:1].isupper():
            return name.lower()
    return None


def _handles_duplicates(model: ModuleModel, insert: cst.Call, decision: cst.CSTNode) -> bool:
    """The insert runs, below `decision`, in a `try` whose handler names the database's duplicate error."""
    for node in model.ancestors(insert):
        if node is decision:
            break
        if isinstance(node, cst.Try):
            for handler in node.handlers:
                caught = model.module.code_for_node(handler.type) if handler.type is not None else ""
                if "IntegrityError" in caught or "UniqueViolation" in caught:
                    return True
    return False


def starts_after(model: ModuleModel, first: cst.CSTNode, second: cst.CSTNode) -> bool:
    """`second` starts after `first`'s statement, in the same function."""
    statement = model.statement_of(first)
    order = source_order(model, model.scope_of(first))
    return not model.is_inside(second, statement) and order.get(statement, 0) < order.get(second, 0)
