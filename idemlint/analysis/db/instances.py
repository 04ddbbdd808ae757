"""Writes and reads on instances (state setters are `setter_calls.py`): attribute
assignments a later `save()`/`commit()` persists, and the rows a function changes without
loading them (`self` in a model method, a parameter, a loop variable, a helper's result)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import (
    chain_calls,
    django_predicates,
    full_chain,
    kwarg_predicates,
    locks,
    locks_by_keyword,
    python_value_kind,
)
from idemlint.analysis.db.object_records import (
    assignments_to,
    decorator_name,
    held_anchor,
    held_under_a_lock,
    uses_database,
)
from idemlint.analysis.db.records import DbRead, DbWrite, record_name
from idemlint.analysis.db.sa_filters import rows_chosen_by, selected_model, with_statement
from idemlint.analysis.db.scopes import expected_by_the_save, first_persist_after, source_order
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.model import ModuleModel, keyword, local_callee, string_value
from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.analysis.sql import Predicate
from idemlint.knowledge.orms import ROW_QUERY_METHODS, VIEW_FRAMEWORKS, is_row_base

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.sql import Predicate
else:
    cst = LazyModule("libcst", globals(), "cst")


def record_reads(
    model: ModuleModel, reads: list[DbRead], writes: list[DbWrite], locked_returners: frozenset[str] = frozenset()
) -> list[DbRead]:
    """Instances a function changes and saves without loading them: `self` in a model
    method, a parameter (a webhook's payment), a loop variable, a helper's result, a record
    the object holds (`self.round`). Their fields were read by someone else, earlier and
    without a lock: a decision on them is a read-decide-write as much as one on a fresh `get()`.
    A helper's result is locked where the helper loads it so (`locked_returners`, by name)."""
    found: list[DbRead] = []
    loaded = {(model.scope_of(r.call), r.instance) for r in reads if r.instance}
    wanted: dict[tuple[cst.CSTNode, str], None] = {}
    for target, _value, _statement in model.attribute_assigns:
        name = record_name(target.value)
        if name is not None:
            wanted[(model.scope_of(target), name)] = None
    for write in writes:
        if write.kind == "setter" and write.instance:
            wanted[(model.scope_of(write.node), write.instance)] = None
    for scope, name in wanted:
        if (scope, name) in loaded or not isinstance(scope, cst.FunctionDef):
            continue
        anchor = _record_anchor(model, scope, name)
        if anchor is not None:
            node, origin = anchor
            locked = (
                origin == "loop variable"
                and _drawn_from_a_lock(model, node)
                or origin == "helper result"
                and (locks_by_keyword(node) or _from_a_locking_helper(model, node, locked_returners))
                and not _ends_transactions(model, scope)
                or origin == "held"
                and held_under_a_lock(model, scope, name)
            )
            filters = (
                _chosen_by(model, node, reads)
                if origin == "loop variable"
                else _returned_from_query(model, node)
                if origin == "helper result"
                else ()
            )
            found.append(DbRead(node, None, locked, (), name, filters, record=origin))
    return found


_KEEPS_THE_ROWS = frozenset({"list", "tuple", "sorted", "reversed", "iter"})


def _chosen_by(model: ModuleModel, loop: cst.CSTNode, reads: list[DbRead]) -> tuple[Predicate, ...]:
    """`for site in Site.objects.filter(state=DONE)` (directly, or through a name bound to the
    query): each row the loop gives was found in the states the query names."""
    if not isinstance(loop, cst.For):
        return ()
    sources = [loop.iter, *origin_nodes(model, loop.iter)]
    # the queries the loop iterates: the outermost calls, each with its chain, not a subquery in
    # one of its arguments (`.exclude(pk__in=Model.objects.filter(...).values_list("id"))`)
    calls = [node for node in sources if isinstance(node, cst.Call)]
    outer = [c for c in calls if not any(other is not c and model.is_inside(c, other) for other in calls)]
    # `list(qs)`, `sorted(qs, key=...)`, `reversed(qs)`: the rows of the query inside
    outer = [
        c.args[0].value
        if isinstance(c.func, cst.Name)
        and c.func.value in _KEEPS_THE_ROWS
        and c.args
        and isinstance(c.args[0].value, cst.Call)
        else c
        for c in outer
    ]
    chains = [with_statement(model, chain_calls(c)) for c in outer]
    on_a_chain = {id(link) for chain in chains for link in chain}
    for read in reads:
        if read.filters and (read.call is loop.iter or id(read.call) in on_a_chain):
            chain = with_statement(model, full_chain(model, read.call)) if isinstance(read.call, cst.Call) else []
            # a SQLAlchemy read's tests (`!=`, `or_()`, another table's) need not say which states its rows are in
            return tuple(rows_chosen_by(model, chain)) if selected_model(model, chain) else read.filters
    for chain in chains:  # a query iterated as it is (`Model.objects.filter(...)`, `session.query(M).filter_by(...)`,
        # `session.scalars(select(M).where(...))`) is no read call of its own
        found = django_predicates(model, chain) or rows_chosen_by(model, chain)
        if found:
            return tuple(found)
    return _returned_from_query(model, loop.iter)  # `for match in self._pending_matches():`


def _returned_from_query(model: ModuleModel, call: cst.CSTNode) -> tuple[Predicate, ...]:
    """`user = self.get_object()`, `match = self._pending(pk)`: a row a helper of this module
    returns from a query that names states (`return Match.objects.get(pk=pk, status=PENDING)`),
    or, for `get_object()` in a view that derives straight from Django's or DRF's, a row drawn
    from its own `get_queryset()` or `queryset = ...` (`return
    StagedUser.objects.filter(request_state=PENDING)`): found only in those states. One way out
    only, the query written there or assigned once to the name returned; its `filter()` or
    `get()` naming a state or states, not an `exclude()`."""
    if not isinstance(call, cst.Call):
        return ()
    callee = local_callee(model, call)
    queries: list[cst.BaseExpression] = []
    if callee is None and isinstance(call.func, cst.Attribute) and call.func.attr.value == "get_object":
        owner = model.enclosing_class(call) if model.dotted(call.func.value) == "self" and not call.args else None
        if owner is None or not _derives_from_a_framework(model, owner):
            return ()  # `get_object(queryset=...)`, or a base of the project's own may choose otherwise
        methods = [s for s in owner.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "get_queryset"]
        callee = methods[-1] if methods else None
        if callee is None:
            queries = [
                s.value
                for line in owner.body.body
                if isinstance(line, cst.SimpleStatementLine)
                for s in line.body
                if isinstance(s, cst.Assign)
                and any(isinstance(t.target, cst.Name) and t.target.value == "queryset" for t in s.targets)
            ]
    if callee is not None:
        queries = [r.value for r in model.returns.get(callee, ()) if r.value is not None]
    if len(queries) != 1:
        return ()  # several ways out: a precondition only if each names it
    query: cst.BaseExpression | None = queries[0]
    if isinstance(query, cst.Name):
        query = model.sole_value(query)  # `qs = ....filter(...)`, assigned once, then `return qs`
    return _chosen_states(model, query) if isinstance(query, cst.Call) else ()


def _chosen_states(model: ModuleModel, query: cst.Call) -> tuple[Predicate, ...]:
    """What a query's `filter()` and `get()` require a column to equal or be among."""
    found = [
        predicate
        for link in chain_calls(query)
        if isinstance(link.func, cst.Attribute) and link.func.attr.value in ("filter", "get")
        for predicate in kwarg_predicates(model, link)
        if predicate.op in ("eq", "in")
    ]
    return tuple(found)


def _derives_from_a_framework(model: ModuleModel, owner: cst.ClassDef) -> bool:
    """Every base of the class is Django's or DRF's (`GenericViewSet`, `UpdateAPIView`): its
    `get_object()` is theirs, drawn from `get_queryset()` or `queryset`."""
    bases = [model.qualname(b.value) or "" for b in owner.bases]
    return bool(bases) and all(b.startswith(VIEW_FRAMEWORKS) for b in bases)


def _from_a_locking_helper(model: ModuleModel, call: cst.CSTNode, returners: frozenset[str]) -> bool:
    """`_get_for_update(ref)`, `self._get_for_update(ref)`: a project function that returns a row
    it loaded under a row lock, a method by its class's name for it (`OrderView.get_object`, not
    another view's inherited `get_object()`); not a query's or a mapping's method (`cache.get`)."""
    func = call.func if isinstance(call, cst.Call) else None
    if isinstance(func, cst.Name):
        key = func.value
    elif isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        receiver, owner = func.value.value, model.enclosing_class(call)
        if receiver in ("self", "cls"):
            key = f"{owner.name.value}.{func.attr.value}" if owner is not None else ""
        else:  # `Loader.load(pk)` by its class, `loaders.load(pk)` a module's function
            key = f"{receiver}.{func.attr.value}" if receiver[:1].isupper() else func.attr.value
    else:
        return False
    return key in returners and key.rsplit(".", 1)[-1] not in ROW_QUERY_METHODS


def _ends_transactions(model: ModuleModel, scope: cst.CSTNode) -> bool:
    """The function commits or rolls back (`frappe.db.commit()`, `session.rollback()`): a lock
    its load took may be gone by the write."""
    return any(
        type(node) is cst.Call and type(node.func) is cst.Attribute and node.func.attr.value in ("commit", "rollback")
        for node in model.iter_nodes(scope)
    )


def _drawn_from_a_lock(model: ModuleModel, loop: cst.CSTNode) -> bool:
    """`for row in Model.objects.select_for_update().filter(...)` (directly, or through a name
    bound to the queryset): each row the loop gives was read under the query's row lock."""
    if not isinstance(loop, cst.For):
        return False
    return any(isinstance(node, cst.Call) and locks(chain_calls(node)) for node in origin_nodes(model, loop.iter))


def _related_counter(model: ModuleModel, target: cst.Attribute, statement: cst.CSTNode) -> str | None:
    """`instance.user.profile` in `instance.user.profile.uploads += 1`: a related row reached
    through a record's relations, its column moved from the value the ORM loaded on access
    (the lost-update reading judges it; not `self.profile...`, which the object holds)."""
    chain = target.value
    if type(statement) is not cst.AugAssign or type(chain) is not cst.Attribute:
        return None
    dotted = model.dotted(chain)
    return dotted if dotted and not dotted.startswith("self.") else None


def _set_then_stored(model: ModuleModel, scope: cst.CSTNode, statement: cst.CSTNode, calls: list[cst.CSTNode]) -> bool:
    """A call of a method that saves the instance (`order.ship()`) comes after the assignment:
    it stores what was set before it, not what is set after."""
    order = source_order(model, scope)
    at = order.get(statement, -1)
    return any(order.get(model.statement_of(call), -1) > at for call in calls)


def attribute_writes(
    model: ModuleModel, reads: list[DbRead], writes: list[DbWrite], project: ProjectIndex = EMPTY
) -> list[DbWrite]:
    """`order.status = "paid"` followed by `order.save()` or `session.commit()`; not an attribute
    the object keeps in memory (`_kept_in_memory`)."""
    found: list[DbWrite] = []
    loaded = {(model.scope_of(r.call), r.instance): r for r in reads if r.instance}
    setters: dict[tuple[cst.CSTNode, str | None], list[cst.CSTNode]] = {}
    for w in writes:
        if w.kind == "setter":
            setters.setdefault((model.scope_of(w.node), w.instance), []).append(w.node)
    for target, value, statement in model.attribute_assigns:
        instance = record_name(target.value) or _related_counter(model, target, statement)
        if instance is None:
            continue
        scope = model.scope_of(target)
        read = loaded.get((scope, instance))
        if _kept_in_memory(model, target, read, project):
            continue
        saved_at = first_persist_after(model, scope, instance, statement)
        if saved_at is None and not _set_then_stored(model, scope, statement, setters.get((scope, instance), [])):
            continue
        if _cloned_before(model, scope, instance, statement, saved_at):
            continue  # `x.pk = None` before the save: it inserts a copy, it updates no row
        expected = expected_by_the_save(model, scope, instance, statement)
        found.append(
            DbWrite(
                statement,
                statement,
                "attribute",
                read.table if read else None,
                {target.attr.value.lower(): python_value_kind(model, value)},
                tuple(Predicate(column, "in", "literal") for column in expected),
                True,
                instance,
                values={target.attr.value.lower(): value},
            )
        )
    return found


def _kept_in_memory(model: ModuleModel, target: cst.Attribute, read: DbRead | None, project: ProjectIndex) -> bool:
    """An attribute named with a leading underscore that no model of the project declares
    (`review._close_description = text`, kept for the response), on an instance of one of the
    project's models or of no class known: only where the project's models are known, and not
    on `self` of a class that is none of them (another ORM's document may store any name)."""
    name = target.attr.value
    if name[:1] != "_" or name in project.private_columns or not project.unique_keys:
        return False
    if type(target.value) is cst.Name and target.value.value == "self":
        owner = model.enclosing_class(target)
        return owner is not None and owner.name.value.lower() in project.unique_keys
    return read is None or read.table is None or read.table in project.unique_keys


def _cloned_before(
    model: ModuleModel, scope: cst.CSTNode, instance: str, statement: cst.CSTNode, saved_at: int | None
) -> bool:
    """`instance.pk = None` (or `.id = None`) earlier in the function, or after the write but
    before the save that stores it (`evidence.report = r; evidence.pk = None; evidence.save()`):
    that save makes a new row (Django's way to copy one), so writing its fields is an insert."""
    position = source_order(model, scope)
    until = position.get(statement, 0) if saved_at is None else saved_at  # the save comes after the statement
    return any(
        target.attr.value in ("pk", "id")
        and isinstance(value, cst.Name)
        and value.value == "None"
        and position.get(assignment, 0) < until
        for target, value, assignment in assignments_to(model, scope, instance)
    )


# Methods whose `self` is not a stored row yet, or that define persistence itself.
_NOT_RECORD_METHODS = frozenset(
    {
        "__init__",
        "__post_init__",
        "save",
        "asave",
        "clean",
        "full_clean",
        "pre_save",
        "delete",
        "create",
        "setUp",
        "setUpTestData",
        "from_db",
        "refresh_from_db",
        "__setstate__",
    }
)
# Base classes of stored rows: Django/SQLAlchemy/Flask models and documents.


def _stores_itself(model: ModuleModel, owner: cst.ClassDef) -> bool:
    """A class whose instances are rows: a model base (`models.Model`, `db.Model`,
    `TimeStampedModel`, a declarative `Base`), or a mixin of one that saves itself."""
    memo = model.memo.setdefault("db.stores_itself", {})  # asked once per method: answered once per class
    found = memo.get(id(owner))
    if found is None:
        bases = [model.dotted(b.value) or "" for b in owner.bases]
        found = (
            any(is_row_base(b) for b in bases)
            or uses_database(model)
            and any(
                type(node) is cst.Call
                and type(node.func) is cst.Attribute
                and node.func.attr.value in ("save", "asave")
                and type(node.func.value) is cst.Name
                and node.func.value.value == "self"
                for node in model.iter_nodes(owner.body, stop_at_functions=False)
            )
        )
        memo[id(owner)] = found
    return bool(found)


# Helpers whose result is a new object, not a stored row someone else decided on (a private
# helper's name too: `self._create_action_plan(...)` makes one as `create_action_plan` does).
_CONSTRUCTORS = re.compile(r"^(create|make|build|new|copy|clone|construct|init|prepare)(_|$)|(^|\.)create$")


# what a new instance of a class is made by: a Django manager's `self.model()`, a classmethod's
# `cls()`, `self.__class__()`, and a class held by a name that says so (`flow.task_class(...)`,
# `model_cls(...)`, `klass(...)`, `order_factory(...)`)
_NAMES_A_CLASS = re.compile(r"^(__class__|(\w+_)?(class|cls|klass|model|factory))$")


def _record_anchor(model: ModuleModel, scope: cst.FunctionDef, name: str) -> tuple[cst.CSTNode, str] | None:
    """Where `name` gets its value in `scope`, when that makes it a stored row this function
    did not load: (node, what kind of record) or None."""
    if name.startswith("self."):
        return held_anchor(model, scope, name)
    bindings = model.bindings_of(scope, name)
    if not bindings:
        return None
    if len({id(b.statement) for b in bindings}) > 1:
        return None  # rebound in the function: judged by the loaded-read rules
    binding = bindings[0]
    if binding.kind == "param":
        params = scope.params.params
        method = isinstance(model.parents.get(model.parents.get(scope)), cst.ClassDef)  # type: ignore[arg-type]
        if name == "cls" or method and params and params[0].name.value == name and name != "self":
            return None
        if name == "self":
            owner = model.enclosing_class(scope)
            if owner is None or scope.name.value in _NOT_RECORD_METHODS:
                return None
            if not _stores_itself(model, owner):
                return None  # a worker, a form, a client: not a stored row
            if any(decorator_name(d) in ("classmethod", "staticmethod") for d in scope.decorators):
                return None
            return binding.statement, "self"
        return binding.statement, "parameter"
    if binding.kind == "for" and isinstance(binding.value, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        return binding.statement, "loop variable"
    if binding.kind == "assign" and isinstance(binding.value, (cst.Call, cst.Await)):
        call = binding.value.expression if isinstance(binding.value, cst.Await) else binding.value
        if not isinstance(call, cst.Call):
            return None
        callee = model.dotted(call.func) or ""
        last = callee.rsplit(".", 1)[-1]
        if not callee or last[:1].isupper() or _CONSTRUCTORS.search(last.lstrip("_")) and "_or_update" not in last:
            return None
        if _NAMES_A_CLASS.match(last):
            return None  # `self.model()`, `cls()`, `flow.task_class(...)`: a new instance
        if last in ("save", "get_or_create", "update_or_create", "copy", "deepcopy") or "super" in callee:
            return None
        return call, "helper result"
    return None


def related_reads(model: ModuleModel, reads: list[DbRead]) -> list[DbRead]:
    """`deploy = Deploy.objects.select_related("service").select_for_update().get(pk=pk)`, then
    `service = deploy.service`: FOR UPDATE locks every row the join returns (Django's documented
    default), so the related row is read under the same lock; not where `of=` leaves it out."""
    found: list[DbRead] = []
    for read in reads:
        if not read.locked or read.instance is None or not isinstance(read.call, cst.Call):
            continue
        related: set[str] = set()
        locked_only: set[str | None] | None = None  # `select_for_update(of=("self", "service"))`
        for link in chain_calls(read.call):
            method = link.func.attr.value if isinstance(link.func, cst.Attribute) else ""
            if method == "select_related":
                related |= {text.split("__")[0] for a in link.args if (text := string_value(a.value))}
            elif method == "select_for_update" and (of := keyword(link, "of")) is not None:
                named = of.value.elements if isinstance(of.value, (cst.Tuple, cst.List)) else ()
                locked_only = {string_value(e.value) for e in named}
        if locked_only is not None:
            related = {r for r in related if r in locked_only}
        scope = model.scope_of(read.call)
        for name, bindings in (model.bindings.get(scope) or {}).items() if related else ():
            for binding in bindings:
                value = binding.value
                if (
                    binding.kind == "assign"
                    and isinstance(value, cst.Attribute)
                    and isinstance(value.value, cst.Name)
                    and value.value.value == read.instance
                    and value.attr.value in related
                ):
                    found.append(DbRead(value, value.attr.value.lower(), True, (), name))
    return found
