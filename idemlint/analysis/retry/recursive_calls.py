"""Functions that call themselves on failure (`except X: return self._request(...,
retries=retries - 1)`), directly or through a helper that waits and calls them again: a retry
of the whole function, told from a poll (a call on the success path) and a search (a call
handed something new)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, positional_parameters
from idemlint.analysis.retry.answers import says_retryable
from idemlint.analysis.retry.context import RetryContext
from idemlint.analysis.retry.exits import always_leaves
from idemlint.analysis.retry.not_ready import means_not_ready
from idemlint.knowledge.http import AUTH_STATUS_NAMES, AUTH_STATUS_TEXTS
from idemlint.knowledge.keys import CLOCK_CALLS
from idemlint.knowledge.retries import CREDENTIAL_RENEWAL, PROMPT_CALLS, is_attempt_counter

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def recursive_retry(model: ModuleModel, function: cst.FunctionDef) -> RetryContext | None:
    """`def _request(self, ..., retries=3): ... except X: return self._request(..., retries=retries - 1)`:
    a function that calls itself from a failure handler (or under a test that the answer is
    retryable: `if self.is_retryable_status(status):`, `if status == 503:`) with its attempt
    counter stepped, or with the very arguments it was given (`return get_token(client_id,
    secret, url)`, `return self.fetch(*args, **kwargs)`: the same request again), is retried as
    a whole. So is one that calls a helper which steps the counter, waits and calls the
    function again (`return self._retry_request(options, retries)`: a trampoline). A call on
    the success path (`return poll(job, tries - 1)`) is a poll, and one handed something new
    (`lookup(mirrors, index + 1)`) a search."""
    counters = {
        p.name.value
        for p in (*function.params.params, *function.params.kwonly_params)
        if is_attempt_counter(p.name.value)
    }
    name = function.name.value
    method = isinstance(model.parents.get(model.parents.get(function)), cst.ClassDef)  # type: ignore[arg-type]
    stepped = _stepped(model.iter_nodes(function.body), counters) if counters else set()
    for node in model.iter_nodes(function.body):
        if not isinstance(node, cst.Call):
            continue
        callee = _sibling_called(node, method)
        if callee == name and not method and _binds_again(model, function, name):
            continue  # `from units import minutes_of` in the handler: another function of the name
        trampoline = _trampoline(model, function, callee, method) if callee and callee != name else None
        if (
            callee != name
            and trampoline is None
            or not any(
                isinstance(a, (cst.ExceptHandler, cst.ExceptStarHandler))
                and not means_not_ready(model, a)  # `except queue.Full:`: waiting for room, not failing
                or (isinstance(a, cst.If) and model.is_inside(node, a.body) and says_retryable(model, a.test))
                for a in model.ancestors(node)
                if model.is_inside(a, function.body)  # not a handler the whole definition sits in
            )
        ):
            continue
        if trampoline is not None:
            label = f"recursive retry through {trampoline.name.value}()"
            return RetryContext("recursive", "custom", function, node, None, label, by_way_of=trampoline)
        if counters and any(_steps(arg.value, counters) or _names(arg.value, stepped) for arg in node.args):
            refused = _after_refused_credentials(model, function, node)
            return RetryContext("recursive", "custom", function, node, None, "recursive retry", refused_only=refused)
        if (
            node.args
            and _forwards_its_arguments(model, function, node)
            and not _runs_what_it_is_handed(model, function)
            and not _moves_on(model, function)
        ):
            return RetryContext("recursive", "custom", function, node, None, "recursive retry")
    return None


def _after_refused_credentials(model: ModuleModel, function: cst.FunctionDef, again: cst.Call) -> bool:
    """`if r.status_code == requests.codes.unauthorized and retry and self.login(): return
    self._fetch(...)`: the call again is made only on an answer refusing the credentials (401,
    407) and after new ones were asked for, in the test or before it in the branch. The server
    turned the first attempt away before acting: the second cannot do its work twice."""
    for branch in model.ancestors(again, until=function):
        if isinstance(branch, cst.If) and model.is_inside(again, branch.body):
            nodes = [branch.test, *model.iter_nodes(branch.test), *model.iter_nodes(branch.body)]
            refused = any(
                isinstance(n, cst.Integer)
                and n.value in AUTH_STATUS_TEXTS
                or isinstance(n, (cst.Name, cst.Attribute))
                and (model.dotted(n) or "").rsplit(".", 1)[-1].lower() in AUTH_STATUS_NAMES
                for n in (branch.test, *model.iter_nodes(branch.test))
            )
            renewed = any(
                isinstance(n, cst.Call)
                and n is not again
                and CREDENTIAL_RENEWAL.search((model.call_name(n) or model.dotted(n.func) or "").rsplit(".", 1)[-1])
                for n in nodes
            )
            return refused and renewed
    return False


def _sibling_called(call: cst.Call, method: bool) -> str | None:
    """The name of the function of the same class (`self.name(...)`, `cls.name(...)`) or of the
    same module (`name(...)`) that `call` calls, if it calls one."""
    func = call.func
    if method and isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name):
        return func.attr.value if func.value.value in ("self", "cls") else None
    return func.value if isinstance(func, cst.Name) and not method else None


def _binds_again(model: ModuleModel, function: cst.FunctionDef, name: str) -> bool:
    """The function binds its own name in its body (an import, an assignment, a nested `def`), so
    a call by that name there runs what was bound, not the function."""
    if model.bindings_of(function, name):
        return True
    for node in model.iter_nodes(function.body):
        if isinstance(node, cst.ImportAlias):
            bound = node.asname.name if node.asname is not None else node.name
            if isinstance(bound, cst.Name) and bound.value == name:
                return True
    return False


def _trampoline(model: ModuleModel, function: cst.FunctionDef, callee: str, method: bool) -> cst.FunctionDef | None:
    """The other function of `function`'s class (or module) named `callee`, if it calls `function`
    again with an attempt counter of its own stepped (`remaining = remaining_retries - 1; ...;
    return self._request(..., remaining_retries=remaining)`). Looked up by name in the block
    and judged once per pair: a class of hundreds of methods costs no more than its calls."""
    owner = model.parents.get(function)
    siblings: dict[str, cst.FunctionDef] = model.memo.setdefault("siblings", {}).get(id(owner))
    if siblings is None:
        block = owner.body if isinstance(owner, cst.IndentedBlock) else getattr(owner, "body", ())
        siblings = {s.name.value: s for s in block if isinstance(s, cst.FunctionDef)}
        model.memo["siblings"][id(owner)] = siblings
    other = siblings.get(callee)
    if other is None or other is function:
        return None
    judged: dict[tuple[int, str], bool] = model.memo.setdefault("trampolines", {})
    key = (id(other), function.name.value)
    if key not in judged:
        params = (*other.params.params, *other.params.kwonly_params)
        counters = {p.name.value for p in params if is_attempt_counter(p.name.value)}
        nodes = list(model.iter_nodes(other.body)) if counters else []
        stepped = _stepped(nodes, counters)
        judged[key] = any(
            isinstance(n, cst.Call)
            and _sibling_called(n, method) == function.name.value
            and any(_steps(a.value, counters) or _names(a.value, stepped) for a in n.args)
            for n in nodes
        )
    return other if judged[key] else None


def counts_attempts(model: ModuleModel, function: cst.FunctionDef) -> bool:
    """The function tests a count of attempts (`if retries <= 0:`), compares the clock (`if
    time.time() - started > 15: raise`), or leaves on a state of its object another thread may
    set (`if self.stopping.is_set(): return False`): what bounds a recursion that hands itself
    the same arguments again. A transport's own setting (`HTTPAdapter(max_retries=15)`) counts
    the transport's attempts, not these. (One that steps a count of its own moves on: `_moves_on`.)"""
    nodes = list(model.iter_nodes(function.body))
    compared = [n for n in nodes if isinstance(n, cst.Comparison)]
    tested = [n.test for n in nodes if isinstance(n, (cst.If, cst.While, cst.IfExp))]

    def reads(expr: cst.CSTNode, found: Callable[[cst.CSTNode], bool]) -> bool:
        return any(found(n) for n in (expr, *model.iter_nodes(expr)))

    def counter(n: cst.CSTNode) -> bool:
        return (isinstance(n, cst.Name) and is_attempt_counter(n.value)) or (
            isinstance(n, cst.Attribute) and is_attempt_counter(n.attr.value)
        )

    def clock(n: cst.CSTNode) -> bool:
        return isinstance(n, cst.Call) and (model.call_name(n) or "") in CLOCK_CALLS

    def own_state(n: cst.CSTNode) -> bool:
        return isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name) and n.value.value in ("self", "cls")

    return (
        any(reads(expr, counter) for expr in (*compared, *tested))
        or any(reads(expr, clock) for expr in compared)
        or any(isinstance(n, cst.If) and always_leaves(list(n.body.body)) and reads(n.test, own_state) for n in nodes)
    )


def _runs_what_it_is_handed(model: ModuleModel, function: cst.FunctionDef) -> bool:
    """The function calls a callable it is handed (`await func()`): a supervisor that starts a
    caller's task again when it dies (`catch_everything_and_restart(func)`), not a retry of an
    operation of its own. Such a task is meant to run for ever; what it repeats is its callers'."""
    params = {
        p.name.value for p in (*function.params.posonly_params, *function.params.params, *function.params.kwonly_params)
    }
    return any(
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in params
        for node in model.iter_nodes(function.body)
    )


def _moves_on(model: ModuleModel, function: cst.FunctionDef) -> bool:
    """Something differs on the next call though the arguments do not: the function sets
    state it may read (`self.base = next(self.mirrors)`, `self.failures += 1`: a next
    candidate, or a count of its own), or asks a person again (`int(input(prompt))`)."""
    return any(
        isinstance(node, cst.AugAssign)
        or isinstance(node, cst.AssignTarget)
        and isinstance(node.target, (cst.Attribute, cst.Subscript))
        or isinstance(node, cst.Call)
        and (model.call_name(node) or "").rsplit(".", 1)[-1] in PROMPT_CALLS
        for node in model.iter_nodes(function.body)
    )


def _forwards_its_arguments(model: ModuleModel, function: cst.FunctionDef, call: cst.Call) -> bool:
    """Every argument of the call is one of the function's own parameters, in its own place and
    never bound anew in it: `get_token(client_id, secret, url)`, `self.fetch(*args, **kwargs)`,
    `send(url, body=body)`; not `pt = reroute(pt)` then `execute(db, pt)`, a new input."""
    if any(
        isinstance(arg.value, cst.Name) and any(b.kind != "param" for b in model.bindings_of(function, arg.value.value))
        for arg in call.args
    ):
        return False
    params = function.params
    positional = positional_parameters(model, function)
    star = params.star_arg.name.value if isinstance(params.star_arg, cst.Param) else None
    double = params.star_kwarg.name.value if params.star_kwarg is not None else None
    named = set(positional) | {p.name.value for p in params.kwonly_params}
    for index, arg in enumerate(call.args):
        value = arg.value
        if not isinstance(value, cst.Name):
            return False
        if arg.star == "*":
            if value.value != star:
                return False
        elif arg.star == "**":
            if value.value != double:
                return False
        elif arg.keyword is not None:
            if arg.keyword.value != value.value or value.value not in named:
                return False
        elif index >= len(positional) or positional[index] != value.value:
            return False
    return True


def _stepped(nodes: Iterable[cst.CSTNode], counters: set[str]) -> set[str]:
    """Names that hold a counter moved by a step: `remaining = remaining_retries - 1`, or the
    counter itself moved in place (`retry -= 1`) before it is handed on."""
    found: set[str] = set()
    for n in nodes:
        if isinstance(n, cst.Assign) and _steps(n.value, counters):
            found.update(t.target.value for t in n.targets if isinstance(t.target, cst.Name))
        elif (
            isinstance(n, cst.AugAssign)
            and isinstance(n.operator, (cst.SubtractAssign, cst.AddAssign))
            and isinstance(n.target, cst.Name)
            and n.target.value in counters
        ):
            found.add(n.target.value)
    return found


def _names(expr: cst.BaseExpression, names: set[str]) -> bool:
    return isinstance(expr, cst.Name) and expr.value in names


def _steps(expr: cst.BaseExpression, counters: set[str]) -> bool:
    """`retries - 1`, `attempt + 1`: the counter moved by one step."""
    return (
        isinstance(expr, cst.BinaryOperation)
        and isinstance(expr.operator, (cst.Subtract, cst.Add))
        and isinstance(expr.left, cst.Name)
        and expr.left.value in counters
    )
