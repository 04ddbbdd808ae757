"""Whether code acts outside the process: after a write (`effect_after`), or in the code a
decision guards (`side_effect_in`). Logging, builtins, clocks, getters and the writes
themselves are quiet."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.changes import computes_a_written_value, passes_the_change_on
from idemlint.analysis.db.records import DJANGO_CHAIN, DJANGO_READ_TERMINALS, SA_READ_TERMINALS, SESSION, DbWrite
from idemlint.analysis.db.repeat_safe import repeat_safe
from idemlint.analysis.db.scopes import persisting_helper_argument, source_order, statements_after
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.model import ModuleModel, called_name, local_callee, string_value
from idemlint.knowledge.locks import SESSION_HOUSEKEEPING
from idemlint.knowledge.orms import SESSION_READS, SESSION_WORK
from idemlint.knowledge.repeats import names_an_action
from idemlint.knowledge.roles import SERIALISER, VIEW_RESPONSE

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db.classify import DbAnalysis
else:
    cst = LazyModule("libcst", globals(), "cst")

# Calls that change nothing outside the process: logging, builtins, clocks, responses, getters.
_QUIET_CALLS = re.compile(
    r"^(\w+\.)*(print|len|str|int|float|bool|list|dict|set|tuple|min|max|sum|sorted|isinstance|getattr|hasattr|"
    r"repr|format|round|abs|any|all|setattr|range|enumerate|zip|_|gettext|gettext_lazy|ugettext|ugettext_lazy|ngettext|reverse|"
    r"super|emit_\w+|now|utcnow|today|time|monotonic|warn|fromtimestamp|utcfromtimestamp|"
    r"fromisoformat|strptime|strftime|timestamp|dumps|loads|sleep)$"  # a wait acts on nothing outside
)
# text made safe for a page or an address (`markupsafe.escape(...)`, `urlencode(...)`), called
# bare or on its module: `broker.quote(order)` may ask for a price
_TEXT_MADE_SAFE = re.compile(r"^(escape|conditional_escape|mark_safe|format_html|quote|quote_plus|urlencode|slugify)$")
# an audit trail's record of a change (`obj.log_action(...)`, `history.add_entry_log(...)`): a
# racing duplicate records it twice, it does not act twice
_AUDIT_RECORD = re.compile(r"^(log_\w+|\w+_log|audit_\w+)$")
_QUIET_RECEIVERS = re.compile(
    r"(^|\.)(_?log|_?logger|logging|LOGGER|LOG|messages|stdout|stderr|structlog|contextvars|sentry_sdk|statsd|metrics)$"
)
_QUIET_METHODS = (
    frozenset(
        {
            "save",
            "asave",
            "commit",
            "flush",
            "refresh_from_db",
            # a database transaction opened (`with transaction.atomic():`): the writes inside are the acts
            "atomic",
            # Django's model validation: it raises, it changes nothing
            "full_clean",
            "clean",
            "clean_fields",
            "validate_unique",
            "validate_constraints",
            "format",
            "join",
            "strip",
            "lower",
            "upper",
            "startswith",
            "endswith",
            "total_seconds",
            "isoformat",
            "strftime",
            # a string's own methods compute a value (`self.name.split()` for a lazily filled field)
            "split",
            "rsplit",
            "splitlines",
            "partition",
            "rpartition",
            "replace",
            "removeprefix",
            "removesuffix",
            "title",
            "capitalize",
            "casefold",
            "encode",
            "rstrip",
            "lstrip",
            "zfill",
            "get",
            "items",
            "keys",
            "values",
            "append",
            "add",
            "copy",
            # reading a response that has come back (`resp.json()`): the request was the act
            "json",
            "raise_for_status",
            "decode",
        }
    )
    | DJANGO_CHAIN
    | DJANGO_READ_TERMINALS
)


def side_effect_in(model: ModuleModel, db: DbAnalysis, test: cst.BaseExpression, writes: list[DbWrite], decided: list[DbWrite] | None = None, changed: bool = False) -> bool:  # fmt: skip
    """Whether the code a test decides calls anything beyond the writes it decides (`decided`,
    `writes` by default) that may act outside the process (another row, a message, a signal, a
    payment) where `writes` run: a call in the other branch of an `if` holding them is not. Where
    the writes record a change (`changed`: `analysis/db/changes.py`), a call passing it on is not."""
    guard = model.parents.get(test)
    if not isinstance(guard, cst.If):
        return True
    if any(model.is_inside(w.node, guard.body) for w in writes):
        region: list[cst.CSTNode] = [guard.body]  # the else branch runs when nothing was written
    elif any(model.is_inside(w.node, guard) for w in writes):
        region = [guard.orelse] if guard.orelse else []
    else:
        region = statements_after(model, guard) or []
    own = {id(w.call) for w in (decided or writes) if w.call is not None}
    for root in region:
        # a call in a further test (`elif workflow.num_graded() >= n:`) computes the decision
        tests = [n.test for n in (root, *model.iter_nodes(root)) if type(n) is cst.If]
        deciding = {id(v) for w in (decided or writes) for v in w.values.values()} | {id(t) for t in tests}
        for node in model.iter_nodes(root):
            if (
                type(node) is cst.Call
                and id(node) not in own
                and not _quiet_call(model, node, decided or writes)
                and not computes_a_written_value(model, node, deciding)
                and not (changed and passes_the_change_on(model, node, decided or writes))
            ):
                if not any(model.is_inside(node, test) for test in tests) and not apart(model, node, writes, root):
                    return True
    return False


def apart(model: ModuleModel, node: cst.CSTNode, writes: list[DbWrite], root: cst.CSTNode | None = None) -> bool:
    """`node` runs only on a branch of an `if` (inside `root`) whose other branch holds every write,
    and no loop holds that `if`: round a loop, one run takes both branches."""
    for branch in model.ancestors(node, until=root):
        owner = model.parents.get(branch)
        if type(owner) is not cst.If or branch not in (owner.body, owner.orelse):
            continue
        other = owner.orelse if branch is owner.body else owner.body
        if other is not None and all(model.is_inside(w.node, other) for w in writes):
            around = (*model.ancestors(owner, until=root), root)
            return not any(isinstance(a, (cst.For, cst.While)) for a in around)
    return False


def quiet_call(model: ModuleModel, node: cst.Call) -> bool:
    """A call that changes nothing outside the process: logging, builtins, getters, responses."""
    return _quiet_call(model, node, [])


def _quiet_call(model: ModuleModel, node: cst.Call, writes: list[DbWrite], depth: int = 0) -> bool:
    """A call that changes nothing outside the process (or only computes a written value);
    `depth`: how many helpers deep the call is (`_only_computes`)."""
    name = model.call_name(node) or ""
    method = node.func.attr.value if type(node.func) is cst.Attribute else ""
    receiver = model.dotted(node.func.value) if type(node.func) is cst.Attribute else None
    called = (method or name.rsplit(".", 1)[-1]).lstrip("_")  # `_get_response_time`: a getter all the same
    return bool(
        _QUIET_CALLS.match(name)
        or (VIEW_RESPONSE.match(name.rsplit(".", 1)[-1]) or _TEXT_MADE_SAFE.match(name.rsplit(".", 1)[-1]))
        and (not method or _module_attribute(model, receiver))  # `flask.jsonify(...)`, not `stub.SubmitResponse(...)`
        or SERIALISER.match(called)
        and not any(a.keyword is None for a in node.args)  # `entry.to_dict()`, not `frame.to_json(path)`
        or method in _QUIET_METHODS
        or method in SESSION_HOUSEKEEPING
        and _a_database_session(model, node, receiver)  # `db.rollback()`, `await session.refresh(order)`
        or (receiver and _QUIET_RECEIVERS.search(receiver))
        or _AUDIT_RECORD.match(method or name.rsplit(".", 1)[-1])
        or re.match(r"^(get|is|has|connect_to|connect_from)_", called)  # a getter, a test, a client connected
        and "create" not in name
        or _reads_what_is_written(model, node, called, writes)
        or name.rsplit(".", 1)[-1][:1].isupper()
        and (
            not method or _module_attribute(model, receiver) or type(model.parents.get(node)) is cst.Raise
        )  # a class built: `MongoClient(url)`, `pymongo.MongoClient(url)`, the error raised:
        # `raise serializers.ValidationError(...)` (not `raise escalate(order)`, which may page first)
        or not names_an_action(called)  # computes the value written, unless it acts: `x.id = api.create_x().id`
        and bool(
            {id(node), *(id(a) for a in model.ancestors(node))} & {id(v) for w in writes for v in w.values.values()}
        )
        or persisting_helper_argument(node) in {w.instance for w in writes if w.instance}
        or _local_container(model, node)
        or repeat_safe(model, node, called)
        or method in SESSION_READS
        and _a_database_session(model, node, receiver)  # `db.query(Profile)`: SQLAlchemy's read
        or method in _QUERY_READS
        and _reads_through_a_query(model, node)  # `db.query(Flavor).filter_by(**f).one()`
        or depth < 2
        and _only_computes(model, node, depth)
    )


# what a SQLAlchemy query chain reads through: narrowing it, and running it for rows
_QUERY_READS = frozenset(
    DJANGO_CHAIN | SA_READ_TERMINALS | {"filter_by", "join", "outerjoin", "options", "limit", "offset", "count"}
)


def _reads_through_a_query(model: ModuleModel, call: cst.Call) -> bool:
    """`session.query(Flavor).filter_by(**filters).one()`: each call of the chain narrows or runs a
    query a database session started (a read), down to the session's `query(...)`."""
    node: cst.BaseExpression = call
    while type(node) is cst.Call and type(node.func) is cst.Attribute:
        method = node.func.attr.value
        if method in SESSION_READS:
            return _a_database_session(model, node, model.dotted(node.func.value))
        if method not in _QUERY_READS:
            return False
        node = node.func.value
    return False


def _a_database_session(model: ModuleModel, call: cst.Call, receiver: str | None) -> bool:
    """The receiver is named like a database session and the function also commits, flushes,
    adds or queries through it (`db.commit()`): not a chat's or a client's session."""
    if not receiver or not SESSION.search(receiver):
        return False
    return any(
        type(node) is cst.Call
        and type(node.func) is cst.Attribute
        and node.func.attr.value in SESSION_WORK
        and model.dotted(node.func.value) == receiver
        for node in model.iter_nodes(model.scope_of(call))
    )


def _only_computes(model: ModuleModel, call: cst.Call, depth: int = 0) -> bool:
    """A function of this module (or a method of the caller's class) that only computes a
    value: not named for an act nor wrapped by a decorator that may add one, it returns a value,
    stores into nothing but its own names and the containers it made, changes nothing it is
    given, and each call it makes is quiet or one such function in turn, two helpers deep
    (`_token_to_dict(t)` building a response's dict)."""
    callee = local_callee(model, call)
    if callee is None or type(call.func) is cst.Name and _bound_in_caller(model, call, call.func.value):
        return False  # not this module's, or a parameter of the caller's that shadows it
    if names_an_action(callee.name.value.lstrip("_")) or any(
        (model.dotted(d.decorator) or "") not in ("staticmethod", "classmethod") for d in callee.decorators
    ):
        return False  # `issue_refund(order)`: named for an act, whatever its body (a stub) shows
    if not any(r.value is not None for r in model.returns.get(callee, ())):
        return False  # what computes gives a value back
    memo = model.memo.setdefault("db.only_computes", {})
    key = (id(callee), depth)
    if key not in memo:
        memo[key] = False  # a function calling itself is not taken to compute only
        given = {p.name.value for p in (*callee.params.params, *callee.params.kwonly_params)}
        memo[key] = not any(
            type(node) in (cst.Global, cst.Nonlocal, cst.Yield, cst.Await)
            or type(node) in (cst.AssignTarget, cst.AugAssign, cst.AnnAssign)
            and not _its_own(model, callee, node.target, type(node) is cst.AugAssign)  # type: ignore[attr-defined]
            or type(node) is cst.Call
            and (
                called_name(node) in _STORES
                or _changes_what_it_is_given(model, node, given)
                or not _quiet_call(model, node, [], depth + 1)
            )
            for node in model.iter_nodes(callee.body)
        )
    return memo[key]


def _bound_in_caller(model: ModuleModel, call: cst.Call, name: str) -> bool:
    """`_label(key)` where the calling function binds `_label` itself (a parameter)."""
    scope = model.scope_of(call)
    return scope is not model.module and bool(model.bindings_of(scope, name))


# what stores a record, quiet beside the write a race is about, not in a helper that only computes
_STORES = frozenset({"save", "asave", "commit", "flush", "add", "update", "delete", "create", "bulk_update", "execute"})


def _changes_what_it_is_given(model: ModuleModel, call: cst.Call, given: set[str]) -> bool:
    """`user.roles.append(role)`, `setattr(other, ...)`: a change to an object the helper was
    handed (or reaches through one), not to a container it made."""
    name = called_name(call)
    if name in ("setattr", "delattr"):
        return True
    if name not in _CONTAINER_METHODS or type(call.func) is not cst.Attribute:
        return False
    root = call.func.value
    while type(root) in (cst.Attribute, cst.Subscript, cst.Call):
        root = root.func if type(root) is cst.Call else root.value  # type: ignore[attr-defined]
    return type(root) is not cst.Name or root.value in given or root.value == "self"


def _its_own(model: ModuleModel, function: cst.FunctionDef, target: cst.BaseExpression, in_place: bool) -> bool:
    """A name (not a parameter changed in place: `regions += [r]` extends the caller's list),
    or an item of a container the function made itself (`shown["label"]` after `shown =
    {...}`), not of a parameter, a row it loaded or looped over, or anything outside."""
    if type(target) is cst.Name:
        return not in_place or all(b.kind != "param" for b in model.bindings_of(function, target.value))
    return (
        type(target) is cst.Subscript
        and type(target.value) is cst.Name
        and _made_here(model, function, target.value.value)
    )


def _module_attribute(model: ModuleModel, receiver: str | None) -> bool:
    """The receiver is an imported module (`pymongo` in `pymongo.MongoClient(...)`), not an
    object whose capitalised method acts (`client.service.CreateOrder(...)`)."""
    head = (receiver or "").split(".", 1)[0]
    return model.imports.get(head) == head  # `import pymongo`; not `from shop.soap import erp`


# a call named for a read (`chat_getPermalink`, `team_info`, `fetch_profile`): its answer may be
# what the write stores (a lazily filled cache)
_READ_NAME = re.compile(r"^(?:[a-z]+_)?(?:(?:get|fetch|lookup|retrieve|describe|list)(?:_|[A-Z]|$)|info$)")


def _reads_what_is_written(model: ModuleModel, node: cst.Call, called: str, writes: list[DbWrite]) -> bool:
    """`result = client.chat_getPermalink(...)`, then `self.cached_permalink = result["permalink"]`:
    a read whose answer is what the write stores. Racing fills store the same answer. A call
    that acts (`charge = stripe.Charge.create(...)`, then `order.charge_id = charge.id`) is not
    a read, whatever feeds on its result."""
    if not _READ_NAME.match(called) or names_an_action(called):
        return False  # `create_list`, `send_and_get_receipt`: an action, whatever it also reads
    return any(node in origin_nodes(model, value) for w in writes for value in w.values.values())


# what changes the container it is called on
_CONTAINER_METHODS = frozenset(
    {"update", "add", "append", "extend", "insert", "discard", "remove", "pop", "setdefault", "clear"}
)
_CONTAINERS = frozenset({"set", "list", "dict", "frozenset", "defaultdict", "OrderedDict", "Counter"})


def _local_container(model: ModuleModel, node: cst.Call) -> bool:
    """`fields_to_save.update({"email"})` on a set, list or dict the function made itself: it
    changes nothing outside the process (unlike a queryset's `update()`)."""
    func = node.func
    if type(func) is not cst.Attribute or func.attr.value not in _CONTAINER_METHODS or type(func.value) is not cst.Name:
        return False
    return _made_here(model, model.scope_of(node), func.value.value)


def _made_here(model: ModuleModel, scope: cst.CSTNode, name: str) -> bool:
    """Every binding of `name` in `scope` is a set, list or dict the function makes itself (a
    display, a comprehension, `dict()`, `defaultdict(list)`)."""
    bindings = model.bindings_of(scope, name)
    return bool(bindings) and all(
        type(b.value) in (cst.Set, cst.List, cst.Dict, cst.SetComp, cst.ListComp, cst.DictComp)
        or type(b.value) is cst.Call
        and type(b.value.func) is cst.Name
        and b.value.func.value in _CONTAINERS
        for b in bindings
    )


def effect_after(model: ModuleModel, write: DbWrite) -> bool:
    """Whether the function calls anything with an outside effect on a path after the write
    (not in another branch of an `if` that holds it, not past a `return` that follows it)."""
    own = {id(write.call)} if write.call is not None else set()
    return any(
        type(node) is cst.Call and id(node) not in own and not _quiet_call(model, node, [write])
        for node in nodes_after(model, write.statement)
    )


def act_after(
    model: ModuleModel, statement: cst.CSTNode, quiet: Callable[[cst.Call], bool] = lambda _call: False
) -> cst.Call | None:
    """The first call after a statement (a call of a helper that writes) that acts outside
    the process, on the statement's own path; `quiet` says which calls the caller knows act
    on nothing (a project function that only computes)."""
    return next(
        (
            node
            for node in nodes_after(model, statement)
            if type(node) is cst.Call and not _quiet_call(model, node, []) and not quiet(node)
        ),
        None,
    )


def answers_after(model: ModuleModel, write: DbWrite, literal_only: bool = False) -> bool:
    """Whether the function hands its caller a value after the write (`return True`,
    `return order`, `yield "closed"`): the caller may take it for "done" and act, so the
    count matters there. With `literal_only`, only a literal or `True`/`False`, which can say
    nothing but "done" (not a value built before the write, `return accepted`)."""
    for node in nodes_after(model, write.statement):
        if not isinstance(node, (cst.Return, cst.Yield)) or node.value is None:
            continue
        value = node.value
        if not isinstance(value, cst.BaseExpression):  # `yield from rows`
            if not literal_only:
                return True
            continue
        if isinstance(value, cst.Name) and value.value == "None":
            continue
        if not literal_only or string_value(value) is not None or isinstance(value, (cst.Integer, cst.Float)):
            return True
        if isinstance(value, cst.Name) and value.value in ("True", "False"):
            return True
    return False


def nodes_after(model: ModuleModel, statement: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes of the statement's function that run after it on its path: not in another
    branch of an `if` that holds it, not past a `return` or `raise` that follows it."""
    scope = model.scope_of(statement)
    position = source_order(model, scope)
    end = max((position.get(n, 0) for n in (statement, *model.iter_nodes(statement))), default=0)
    stop = _leaves_after(model, statement, position)
    other_branches: list[cst.CSTNode] = [
        branch
        for ancestor in model.ancestors(statement)
        if isinstance(ancestor, cst.If)
        for branch in ((ancestor.orelse,) if model.is_inside(statement, ancestor.body) else (ancestor.body,))
        if branch is not None
    ]
    other_branches += [  # a handler runs when the try failed, not on the statement's way on
        handler
        for ancestor in model.ancestors(statement)
        if isinstance(ancestor, cst.Try) and model.is_inside(statement, ancestor.body)
        for handler in ancestor.handlers
    ]
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope  # not its decorators: they ran before
    for node in model.iter_nodes(body):
        if end < position.get(node, 0) < stop and not any(model.is_inside(node, branch) for branch in other_branches):
            yield node


def _leaves_after(model: ModuleModel, statement: cst.CSTNode, position: dict[cst.CSTNode, int]) -> int:
    """Just past a `return`/`raise` that ends the write's block right after it (what it
    returns is computed after the write: `return JsonResponse(charge(...))`), or infinity."""
    for later in statements_after(model, model.parents.get(statement)) or []:
        if isinstance(later, cst.SimpleStatementLine) and any(
            isinstance(s, (cst.Return, cst.Raise)) for s in later.body
        ):
            return max((position.get(n, 0) for n in (later, *model.iter_nodes(later))), default=0) + 1
    return 1 << 60
