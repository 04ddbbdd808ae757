"""Which code runs once per attempt: retry loops, retry decorators, retried tasks.

Precision matters more than recall here, because every retry rule starts from this
answer. A loop counts as a retry loop only with evidence of re-attempting the same work:
it iterates over a counter (`range`, `itertools.count`) or is a `while` loop, and either
catches an exception without leaving the loop while a success leaves it, or sleeps
between attempts under an attempt counter. Loops over collections (per-item work),
consumer loops that never leave on success, and polling loops without an attempt
counter are not retry contexts.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, children_of, iter_nodes

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

RETRY_DECORATORS = {
    "tenacity.retry": "tenacity",
    "tenacity.asyncio.retry": "tenacity",
    "backoff.on_exception": "backoff",
    "backoff.on_predicate": "backoff",
    "stamina.retry": "stamina",
    "retrying.retry": "retrying",
    "retry.retry": "retry",
    "retry.api.retry": "retry",
}
RETRY_ITERATORS = {
    "tenacity.Retrying": "tenacity",
    "tenacity.AsyncRetrying": "tenacity",
    "tenacity.asyncio.AsyncRetrying": "tenacity",
    "stamina.retry_context": "stamina",
}
COUNTERS = {"range", "itertools.count", "xrange"}
SLEEPS = {"time.sleep", "asyncio.sleep", "gevent.sleep", "trio.sleep", "anyio.sleep", "eventlet.sleep"}
_NEXT_ITEM = {
    "pop",
    "popleft",
    "heappop",
    "get",
    "get_nowait",
    "next",
    "readline",
    "recv",
    "receive",
    "read",
    "poll",
    "dequeue",
    "take",
    "popitem",
}
_ATTEMPT_NAME = re.compile(r"attempt|retr|tries|try|tried", re.IGNORECASE)
# Celery keywords that only make sense on a task decorator.
_CELERY_KEYWORDS = {
    "autoretry_for",
    "retry_backoff",
    "retry_kwargs",
    "max_retries",
    "bind",
    "acks_late",
    "default_retry_delay",
    "retry_jitter",
    "retry_backoff_max",
}


@dataclass(frozen=True, eq=False)
class RetryContext:
    """Code that runs again on each attempt.

    kind: "loop" (hand-written), "iterator" (tenacity `Retrying`, `stamina.retry_context`),
    "decorator" (the decorated function's body), "task" (a task queue re-runs the body).
    """

    kind: str
    library: str
    node: cst.CSTNode  # the loop, or the FunctionDef whose body is retried
    anchor: cst.CSTNode  # where policy findings are reported: decorator, loop header
    config: cst.Call | None  # the decorator or iterator call carrying the policy, if any
    label: str  # how messages name it: "@tenacity.retry", "retry loop", "Celery task"

    def describe(self, line: int | None = None) -> str:
        return f"{self.label} on line {line}" if line else self.label


class RetryAnalysis:
    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self.contexts: list[RetryContext] = []
        self._by_node: dict[cst.CSTNode, RetryContext] = {}
        for function in model.functions:
            context = self._classify_function(function)
            if context is not None:
                self._add(context)
        for function in model.functions:
            if function not in self._by_node:
                recursive = self._recursive_retry(function)
                if recursive is not None:
                    self._add(recursive)
        for context in self._enqueued_with_retry():
            if context.node not in self._by_node:
                self._add(context)
        for loop in model.loops:
            context = self._classify_loop(loop)
            if context is not None:
                self._add(context)

    def _add(self, context: RetryContext) -> None:
        self.contexts.append(context)
        self._by_node[context.node] = context

    def context_of(self, node: cst.CSTNode) -> RetryContext | None:
        """The innermost retry context that re-runs `node` on each attempt."""
        for ancestor in self.model.ancestors(node):
            context = self._by_node.get(ancestor)
            if context is not None and context.kind == "poll":
                context = None  # a poll re-reads; it does not re-attempt work
            if context is not None:
                if context.kind in ("loop", "iterator") and not _in_loop_body(self.model, node, ancestor):
                    continue
                return context
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return None
        return None

    def _recursive_retry(self, function: cst.FunctionDef) -> RetryContext | None:
        """`def _request(self, ..., retries=3): ... except X: return self._request(..., retries=retries - 1)`:
        a function that calls itself from a failure handler with its attempt counter stepped is
        retried as a whole (a call on the success path, `return poll(job, tries - 1)`, is a poll)."""
        model = self.model
        counters = {
            p.name.value
            for p in (*function.params.params, *function.params.kwonly_params)
            if _ATTEMPT_TOKEN.search(p.name.value)
        }
        if not counters:
            return None
        name = function.name.value
        method = isinstance(model.parents.get(model.parents.get(function)), cst.ClassDef)  # type: ignore[arg-type]
        for node in iter_nodes(function.body):
            if not isinstance(node, cst.Call):
                continue
            func = node.func
            calls_itself = (
                isinstance(func, cst.Attribute)
                and method
                and func.attr.value == name
                and isinstance(func.value, cst.Name)
                and func.value.value in ("self", "cls")
            ) or (isinstance(func, cst.Name) and func.value == name and not method)
            failed = any(isinstance(a, (cst.ExceptHandler, cst.ExceptStarHandler)) for a in model.ancestors(node))
            if calls_itself and failed and any(_steps(arg.value, counters) for arg in node.args):
                return RetryContext("recursive", "custom", function, node, None, "recursive retry")
        return None

    def context_for_loop(self, loop: cst.CSTNode) -> RetryContext | None:
        return self._by_node.get(loop)

    def _enqueued_with_retry(self) -> list[RetryContext]:
        """RQ: `queue.enqueue(charge, order_id, retry=Retry(max=3))` re-runs `charge`."""
        from idemlint.analysis.model import keyword

        model = self.model
        found = []
        for call in model.calls:
            if not isinstance(call.func, cst.Attribute) or not call.func.attr.value.startswith("enqueue"):
                continue
            retry = keyword(call, "retry")
            if retry is None or not isinstance(retry.value, cst.Call):
                continue
            if not (model.call_name(retry.value) or "").startswith("rq."):
                continue
            job = call.args[0].value if call.args and call.args[0].keyword is None else None
            target = model.module_defs.get(job.value) if isinstance(job, cst.Name) else None
            if isinstance(target, cst.FunctionDef):
                found.append(RetryContext("task", "rq", target, retry.value, retry.value, "RQ job enqueued with Retry"))
        return found

    # -- decorators and tasks ----------------------------------------------------------

    def _classify_function(self, function: cst.FunctionDef) -> RetryContext | None:
        model = self.model
        for decorator in function.decorators:
            expr = decorator.decorator
            call = expr if isinstance(expr, cst.Call) else None
            name = model.qualname(call.func if call else expr)
            if name is None:
                continue
            library = RETRY_DECORATORS.get(name)
            if library is not None:
                return RetryContext("decorator", library, function, decorator, call, f"@{name}")
            task = self._task_retry(function, name, call)
            if task is not None:
                library, label = task
                return RetryContext("task", library, function, decorator, call, label)
        return None

    def _task_retry(self, function: cst.FunctionDef, name: str, call: cst.Call | None) -> tuple[str, str] | None:
        last = name.rsplit(".", 1)[-1]
        keywords = {k: a.value for k, a in task_keywords(self.model, call).items()}
        if last == "actor" and ("dramatiq" in name or name == "actor"):
            retries = keywords.get("max_retries")
            if isinstance(retries, cst.Integer) and retries.value == "0":
                return None
            return "dramatiq", "Dramatiq actor (retried by default)"
        if last in ("task", "db_task") and "retries" in keywords:
            retries = keywords["retries"]
            if isinstance(retries, cst.Integer) and retries.value == "0":
                return None
            return "huey", f"@{name}(retries=...)"
        celery_like = (
            last == "shared_task"
            or last == "task"
            and ("celery" in name or bool(_CELERY_KEYWORDS & keywords.keys()) or call is None)
        )
        if not celery_like:
            return None
        if "autoretry_for" in keywords:
            return "celery", "Celery task with autoretry_for"
        if _calls_self_retry(self.model, function):
            return "celery", "Celery task that calls self.retry()"
        if _is_true(keywords.get("acks_late")) and _is_true(keywords.get("task_reject_on_worker_lost")):
            return "celery", "Celery task with acks_late and task_reject_on_worker_lost"
        return None

    # -- loops ------------------------------------------------------------------------

    def _classify_loop(self, loop: cst.For | cst.While) -> RetryContext | None:
        model = self.model
        if isinstance(loop, cst.For):
            iterator = _unwrap_await(loop.iter)
            call = iterator if isinstance(iterator, cst.Call) else _bound_call(model, iterator)
            name = model.qualname(call.func) if call is not None else None
            if name in RETRY_ITERATORS and call is not None:
                return RetryContext("iterator", RETRY_ITERATORS[name], loop, loop, call, f"{name}(...) loop")
            if name not in COUNTERS:
                return None
            counter_names = [n.value for n in iter_nodes(loop.target) if isinstance(n, cst.Name)]
            if isinstance(loop.target, cst.Name):
                counter_names.append(loop.target.value)
        else:
            counter_names = [n.value for n in iter_nodes(loop.test) if isinstance(n, cst.Name)]
            if isinstance(loop.test, cst.Name):
                counter_names.append(loop.test.value)
        counter_names = counter_names + _incremented_attempt_counters(loop)
        if self._catches_and_reattempts(loop, counter_names) or self._sleeps_between_attempts(loop, counter_names):
            return RetryContext("loop", "loop", loop, loop, None, "retry loop")
        if isinstance(loop, cst.While) and self._polls_remote_status(loop):
            return RetryContext("poll", "loop", loop, loop, None, "polling loop")
        return None

    def _polls_remote_status(self, loop: cst.While) -> bool:
        """`while True: s = client.get_status(id); if s == READY: break; ...; sleep(n)`: a loop that
        waits for a remote job. Not a retry (nothing is re-attempted), but it needs a bound."""
        test = loop.test
        if not (
            isinstance(test, cst.Name) and test.value == "True" or isinstance(test, cst.Integer) and test.value != "0"
        ):
            return False
        nodes = _loop_nodes(loop)
        if not any(isinstance(n, cst.Call) and self.model.qualname(n.func) in SLEEPS for n in nodes):
            return False
        if any(isinstance(n, (cst.Try, cst.TryStar)) for n in nodes):
            return False
        # the value polled: a name bound in the loop from a call on a client-like receiver
        polled = set()
        for n in nodes:
            if isinstance(n, cst.Assign) and isinstance(n.value, (cst.Call, cst.Await)):
                call = n.value.expression if isinstance(n.value, cst.Await) else n.value
                if not isinstance(call, cst.Call):
                    continue
                last = (self.model.dotted(call.func) or "").rsplit(".", 1)[-1]
                if last in _NEXT_ITEM or not re.search(r"status|state|result|job|task|progress", last, re.I):
                    continue
                for t in n.targets:
                    if isinstance(t.target, cst.Name):
                        polled.add(t.target.value)
        if not polled:
            return False
        # leaves when a comparison on the polled value holds
        for n in nodes:
            if isinstance(n, cst.If) and isinstance(n.test, cst.Comparison):
                names = {x.value for x in iter_nodes(n.test) if isinstance(x, cst.Name)}
                if isinstance(n.test.left, cst.Name):
                    names.add(n.test.left.value)
                if names & polled and _leaves_loop(n.body):
                    return True
        return False

    def _catches_and_reattempts(self, loop: cst.For | cst.While, counter_names: Sequence[str] = ()) -> bool:
        """A try in the loop whose failure stays in the loop and whose success leaves it."""
        for try_node in _loop_statements(loop, (cst.Try, cst.TryStar)):
            assert isinstance(try_node, (cst.Try, cst.TryStar))
            if not any(isinstance(n, cst.Call) for n in iter_nodes(try_node.body)):
                continue
            if all(always_leaves(handler.body.body) for handler in try_node.handlers):
                continue
            if self._works_on_next_item(loop, try_node) or self._tries_next_candidate(loop, try_node):
                continue
            # Success must leave for sure; a conditional exit is a per-item or polling loop
            # (result-checking retries are recognised by their counter and sleep instead).
            success = [try_node.body]  # IndentedBlock; an `else:` holds one too
            if try_node.orelse is not None:
                success.append(try_node.orelse.body)
            if any(ends_by_leaving(list(block.body)) for block in success):
                return True
            # `except X: sleep(); continue` then `return result`: only failures go round again.
            # When the handler falls through to the same exit, failures leave too: no retry.
            if any(_ends_with_continue(h.body.body) for h in try_node.handlers) and _leaves_after(
                self.model, try_node, loop
            ):
                return True
            if isinstance(loop, cst.While) and _sets_loop_flag(try_node.body, loop):
                return True
            # `if ok: break` in the try, and a give-up on the last attempt
            if _leaves_loop(try_node.body) and _gives_up_on_last_attempt(self.model, loop, counter_names):
                return True
        return False

    def _works_on_next_item(self, loop: cst.For | cst.While, try_node: cst.CSTNode) -> bool:
        """`item = heap.pop()` / `msg = queue.get()` before the try: each pass handles a new
        item, so a failure moves on rather than re-attempting the same work."""
        model = self.model
        used = {n.value for n in iter_nodes(try_node) if isinstance(n, cst.Name)}
        for name in used:
            for binding in model.bindings_of(model.scope_of(loop), name):
                value = binding.value
                if isinstance(value, cst.Await):
                    value = value.expression
                if (
                    isinstance(value, cst.Call)
                    and model.is_inside(binding.statement, loop)
                    and not model.is_inside(binding.statement, try_node)
                    and (model.dotted(value.func) or "").rsplit(".", 1)[-1] in _NEXT_ITEM
                ):
                    return True
        return False

    def _tries_next_candidate(self, loop: cst.For | cst.While, try_node: cst.Try | cst.TryStar) -> bool:
        """`for n in range(100): try: mkdir(f"{prefix}{n}")`: each pass tries a different
        input, so a failure moves on to the next candidate. Only the counter's use in the
        work itself counts (not in a log line)."""
        if not isinstance(loop, cst.For):
            return False
        counters = {n.value for n in (loop.target, *iter_nodes(loop.target)) if isinstance(n, cst.Name)}
        for node in iter_nodes(try_node.body):
            if isinstance(node, cst.Name) and node.value in counters:
                if any(isinstance(a, cst.Comparison) for a in _ancestors_until(self.model, node, try_node)):
                    continue  # `if i < attempts:` checks the bound, it is not the work's input
                call = next((a for a in self.model.ancestors(node) if isinstance(a, cst.Call)), None)
                callee = (self.model.dotted(call.func) or "") if call is not None else ""
                if not re.search(r"(^|\.)(log|logger|logging|print|warn|info|debug|warning|error)\b", callee):
                    return True
        return False

    def _sleeps_between_attempts(self, loop: cst.For | cst.While, counter_names: list[str]) -> bool:
        """Result-checking retry: an attempt counter, a sleep, and a way out on success."""
        if not any(_ATTEMPT_NAME.search(name) for name in counter_names):
            return False
        has_sleep = any(isinstance(n, cst.Call) and self.model.qualname(n.func) in SLEEPS for n in _loop_nodes(loop))
        if not has_sleep and not (
            isinstance(loop, cst.For) and _gives_up_on_last_attempt(self.model, loop, counter_names)
        ):
            return False
        return _leaves_loop(loop.body)


def _unwrap_await(expr: cst.BaseExpression) -> cst.BaseExpression:
    return expr.expression if isinstance(expr, cst.Await) else expr


def _bound_call(model: ModuleModel, expr: cst.BaseExpression) -> cst.Call | None:
    """`retryer = Retrying(...); for attempt in retryer:` -> the Retrying call."""
    if not isinstance(expr, cst.Name):
        return None
    for binding in model.bindings_of(model.scope_of(expr), expr.value):
        if isinstance(binding.value, cst.Call):
            return binding.value
    return None


def _is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _calls_self_retry(model: ModuleModel, function: cst.FunctionDef) -> bool:
    params = function.params.params
    if not params:
        return False
    owner = params[0].name.value
    for node in iter_nodes(function.body):
        if isinstance(node, cst.Call) and model.dotted(node.func) == f"{owner}.retry":
            return True
    return False


def _loop_nodes(loop: cst.For | cst.While) -> list[cst.CSTNode]:
    """Nodes of the loop body, not descending into nested loops or functions."""
    out: list[cst.CSTNode] = []
    stack = list(children_of(loop.body))
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, (cst.For, cst.While, cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(children_of(node))
    return out


def _loop_statements(loop: cst.For | cst.While, types: tuple[type, ...]) -> list[cst.CSTNode]:
    return [n for n in _loop_nodes(loop) if isinstance(n, types)]


def _in_loop_body(model: ModuleModel, node: cst.CSTNode, loop: cst.CSTNode) -> bool:
    """True when `node` sits in the loop's body, not in its iterator, test or else."""
    assert isinstance(loop, (cst.For, cst.While))
    return model.is_inside(node, loop.body)


def always_leaves(statements: Sequence[cst.CSTNode], or_continues: bool = False) -> bool:
    """Whether a block always raises, returns or breaks (so it never re-attempts); with
    `or_continues`, a `continue` counts too (a guard that skips the rest of a pass)."""
    if not statements:
        return False
    last = statements[-1]
    leaving = (cst.Raise, cst.Return, cst.Break, cst.Continue) if or_continues else (cst.Raise, cst.Return, cst.Break)
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, leaving) for s in last.body)
    if isinstance(last, cst.If):
        if last.orelse is None:
            return False
        other = last.orelse
        other_body = [other] if isinstance(other, cst.If) else list(other.body.body)
        return always_leaves(list(last.body.body), or_continues) and always_leaves(other_body, or_continues)
    return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Raise, cst.Return, cst.Break)) for s in last.body)
    if isinstance(last, cst.If):
        if last.orelse is None:
            return False
        other = last.orelse
        other_body = [other] if isinstance(other, cst.If) else list(other.body.body)
        return always_leaves(list(last.body.body)) and always_leaves(other_body)
    return False


def _leaves_loop(block: cst.CSTNode) -> bool:
    """A `break` or `return` in `block` that leaves the loop holding it."""
    stack = list(children_of(block))
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Return, cst.Break)):
            return True
        if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        if isinstance(node, (cst.For, cst.While)):
            # A nested loop's break leaves only that loop; its returns still leave ours.
            if any(isinstance(n, cst.Return) for n in iter_nodes(node)):
                return True
            continue
        stack.extend(children_of(node))
    return False


def _leaves_after(model: ModuleModel, try_node: cst.CSTNode, loop: cst.For | cst.While) -> bool:
    """`try: r = call() except X: continue` followed by `return r` / `break` in the loop."""
    parent = model.parents.get(try_node)
    if not isinstance(parent, cst.IndentedBlock):
        return False
    body = list(parent.body)
    index = next((i for i, s in enumerate(body) if s is try_node), -1)
    return ends_by_leaving(body[index + 1 :])


def _ends_with_continue(statements: Sequence[cst.CSTNode]) -> bool:
    last = statements[-1] if statements else None
    return isinstance(last, cst.SimpleStatementLine) and any(isinstance(s, cst.Continue) for s in last.body)


def ends_by_leaving(statements: Sequence[cst.CSTNode]) -> bool:
    """Whether a block's last statement leaves the loop (return or break) on every path."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, (cst.Return, cst.Break)) for s in last.body)
    if isinstance(last, cst.With):
        return ends_by_leaving(list(last.body.body))  # tenacity: `with attempt: ...; return x`
    if isinstance(last, cst.If) and last.orelse is not None:
        other = last.orelse
        other_body = [other] if isinstance(other, cst.If) else list(other.body.body)
        return ends_by_leaving(list(last.body.body)) and ends_by_leaving(other_body)
    if isinstance(last, (cst.Try, cst.TryStar)):
        blocks = [last.body, *([last.orelse.body] if last.orelse is not None else [])]
        return any(ends_by_leaving(list(b.body)) for b in blocks)
    return False


def _sets_loop_flag(block: cst.CSTNode, loop: cst.While) -> bool:
    """`while not done: try: call(); done = True` style success flags."""
    tested = {n.value for n in iter_nodes(loop.test) if isinstance(n, cst.Name)}
    if isinstance(loop.test, cst.Name):
        tested.add(loop.test.value)
    for node in iter_nodes(block):
        if isinstance(node, cst.Assign):
            for target in node.targets:
                if isinstance(target.target, cst.Name) and target.target.value in tested:
                    return True
    return False


_ATTEMPT_TOKEN = re.compile(
    r"(^|_)(attempts?|attempt_count|retry|retries|tries|tried|retry_count|retry_counter|num_retries|tries_left)(_|$)",
    re.IGNORECASE,
)


def _steps(expr: cst.BaseExpression, counters: set[str]) -> bool:
    """`retries - 1`, `attempt + 1`: the counter moved by one step."""
    return (
        isinstance(expr, cst.BinaryOperation)
        and isinstance(expr.operator, (cst.Subtract, cst.Add))
        and isinstance(expr.left, cst.Name)
        and expr.left.value in counters
    )


def _incremented_attempt_counters(loop: cst.For | cst.While) -> list[str]:
    """`retry_counter += 1` in the loop body: an attempt counter the loop keeps (matched by
    whole words, so `entry` and `retrieved` are not counters)."""
    out = []
    for n in _loop_nodes(loop):
        if isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name) and _ATTEMPT_TOKEN.search(n.target.value):
            out.append(n.target.value)
    return out


def _ancestors_until(model: ModuleModel, node: cst.CSTNode, stop: cst.CSTNode) -> Iterator[cst.CSTNode]:
    for a in model.ancestors(node):
        if a is stop:
            return
        yield a


def _gives_up_on_last_attempt(model: ModuleModel, loop: cst.For | cst.While, counter_names: Sequence[str]) -> bool:
    """`if attempt == attempts: raise` / `if i < n: log else: raise`: an `if` that
    compares the attempt counter and raises on one branch."""
    names = set(counter_names)
    if isinstance(loop, cst.For):
        names |= {n.value for n in (loop.target, *iter_nodes(loop.target)) if isinstance(n, cst.Name)}
    if not names:
        return False
    for n in _loop_nodes(loop):
        if isinstance(n, cst.If) and isinstance(n.test, cst.Comparison):
            used = {x.value for x in (n.test, *iter_nodes(n.test)) if isinstance(x, cst.Name)}
            if not used & names:
                continue
            branches = [list(n.body.body)]
            if n.orelse is not None and not isinstance(n.orelse, cst.If):
                branches.append(list(n.orelse.body.body))
            for b in branches:
                last = b[-1] if b else None
                if isinstance(last, cst.SimpleStatementLine) and any(isinstance(x, cst.Raise) for x in last.body):
                    return True
    return False


@dataclass(frozen=True)
class ClassSetting:
    """A Celery setting declared on a Task base class (`autoretry_for = (...)`): read like the
    decorator's keyword argument (`.value`), reported at the class attribute (`.node`)."""

    value: cst.BaseExpression
    node: cst.CSTNode


def task_keywords(model: ModuleModel, call: cst.Call | None) -> dict[str, cst.Arg | ClassSetting]:
    """The decorator's keywords, plus the retry settings of a `base=` Task class
    defined in this module (the decorator's own keywords win)."""
    out: dict[str, cst.Arg | ClassSetting] = {}
    if call is None:
        return out
    base = None
    for a in call.args:
        if a.keyword is not None:
            out[a.keyword.value] = a
            if a.keyword.value == "base" and isinstance(a.value, cst.Name):
                base = model.module_defs.get(a.value.value)
    if isinstance(base, cst.ClassDef):
        for line in base.body.body:
            if isinstance(line, cst.SimpleStatementLine):
                for st in line.body:
                    if (
                        isinstance(st, cst.Assign)
                        and len(st.targets) == 1
                        and isinstance(st.targets[0].target, cst.Name)
                    ):
                        key = st.targets[0].target.value
                        if key in _CELERY_KEYWORDS and key not in out:
                            out[key] = ClassSetting(st.value, st)
    return out
