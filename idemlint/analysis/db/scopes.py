"""Per-scope indexes the database analysis asks "after"/"used" questions of, each computed
once per scope and kept in the file's own memo (`ModuleModel.memo`), never in a global."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from idemlint._lazy import LazyModule
from idemlint.analysis.calls import tail_name
from idemlint.analysis.db.records import SESSION, DbWrite
from idemlint.analysis.model import ModuleModel

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def _memo(model: ModuleModel, name: str) -> dict[cst.CSTNode, Any]:
    """The file's memo table `name`, keyed by scope."""
    table: dict[cst.CSTNode, Any] = model.memo.setdefault(name, {})
    return table


def source_order(model: ModuleModel, scope: cst.CSTNode) -> dict[cst.CSTNode, int]:
    """Source order of every node in a scope (pre-order), for "after" questions."""
    cache = _memo(model, "db.source_order")
    found = cache.get(scope)
    if found is None:
        found = {node: index for index, node in enumerate(model.iter_nodes(scope))}
        cache[scope] = found
    return found


def names_in(model: ModuleModel, scope: cst.CSTNode) -> dict[str, list[cst.Name]]:
    """Every Name node of a scope (attribute names included), by identifier, computed once."""
    cache = _memo(model, "db.names_in")
    found = cache.get(scope)
    if found is None:
        found = {}
        for node in model.iter_nodes(scope):
            if type(node) is cst.Name:
                found.setdefault(node.value, []).append(node)
        cache[scope] = found
    return found


def persist_calls(model: ModuleModel, scope: cst.CSTNode) -> list[tuple[int, str, str, cst.Call]]:
    """(position, receiver, method, the call) of every save/commit/flush call in a scope, computed once."""
    cache = _memo(model, "db.persist_calls")
    found = cache.get(scope)
    if found is None:
        position = source_order(model, scope)
        found = []
        for node in model.iter_nodes(scope):
            if type(node) is cst.Call and type(node.func) is cst.Attribute:
                method = node.func.attr.value
                owner = model.dotted(node.func.value) or ""
                if method.startswith(("save", "asave")) or method in ("commit", "flush") and SESSION.search(owner):
                    found.append((position[node], owner, method, node))
                    continue
            persisted = persisting_helper_argument(node) if type(node) is cst.Call else None
            if persisted is not None:
                found.append((position[node], persisted, "save", node))
        cache[scope] = found
    return found


_PERSIST_VERBS = ("update_", "save_", "asave_", "persist_", "store_")


def persisting_helper_argument(call: cst.Call) -> str | None:
    """`update_payment(payment)`, `db.save_order(order)`: a helper named for storing exactly
    the instance it is given first, which persists it as `save()` would. A helper named for
    something else (`update_stock(product)`, `update_order_cache(order)`) is not assumed to."""
    name = tail_name(call.func)
    if not call.args or call.args[0].keyword is not None or type(call.args[0].value) is not cst.Name:
        return None
    first = call.args[0].value.value
    return first if any(name == f"{verb}{first}" for verb in _PERSIST_VERBS) else None


def statements_after(model: ModuleModel, statement: cst.CSTNode | None) -> list[cst.CSTNode] | None:
    """The statements after `statement` in its block, or, for an `elif`, after the `if` it hangs
    from; None where it is in no block's list."""
    parent = model.parents.get(statement) if statement is not None else None
    while isinstance(parent, cst.If) and parent.orelse is statement:
        statement, parent = parent, model.parents.get(parent)
    body = getattr(parent, "body", ())
    statements = list(body.body if isinstance(body, cst.BaseSuite) else body)
    return statements[statements.index(statement) + 1 :] if statement in statements else None


def persisted_together(model: ModuleModel, write: DbWrite) -> object:
    """What moves with a write: one statement's columns, or a record's assignments that one
    save persists (the first after the assignment)."""
    if write.kind != "attribute" or write.instance is None:
        return id(write)
    scope = model.scope_of(write.node)
    return (scope, write.instance, first_persist_after(model, scope, write.instance, write.statement))


def first_persist_after(model: ModuleModel, scope: cst.CSTNode, instance: str, statement: cst.CSTNode) -> int | None:
    """Where the first `instance.save(...)` or session/db `commit()`/`flush()` after the
    statement is, in the scope's source order; None where nothing persists it."""
    start = source_order(model, scope).get(statement, 0)
    return min(
        (
            index
            for index, owner, method, _call in persist_calls(model, scope)
            if index > start
            and (method.startswith(("save", "asave")) and owner == instance or method in ("commit", "flush"))
        ),
        default=None,
    )


def expected_by_the_save(
    model: ModuleModel, scope: cst.CSTNode, instance: str, statement: cst.CSTNode
) -> tuple[str, ...]:
    """The columns the first `instance.save(...)` after the statement names as expected
    (`instance.save(expected_task_state=[None])`, oslo.versionedobjects' conditional save:
    the store writes only while the row holds that value, and raises otherwise; `=None` is the
    default, no expectation)."""
    start = source_order(model, scope).get(statement, 0)
    saves = sorted(
        (index, call)
        for index, owner, method, call in persist_calls(model, scope)
        if index > start and method.startswith(("save", "asave")) and owner == instance
    )
    if not saves:
        return ()
    return tuple(
        arg.keyword.value.removeprefix("expected_").lower()
        for arg in saves[0][1].args
        if arg.keyword is not None
        and arg.keyword.value.startswith("expected_")
        and not (isinstance(arg.value, cst.Name) and arg.value.value == "None")  # the default: no expectation
    )
