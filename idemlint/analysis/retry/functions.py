"""Functions whose whole body is retried: retry decorators, task queues that re-run a task,
RQ jobs enqueued with a `Retry` (functions that call themselves on failure: `recursive_calls.py`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import origin_nodes
from idemlint.analysis.model import ModuleModel, keyword, local_callee, positional, positional_parameters
from idemlint.analysis.retry.answer_tests import answers_yes_or_no, returned_test
from idemlint.analysis.retry.answers import says_an_outcome
from idemlint.analysis.retry.callables import makes_a_generator
from idemlint.analysis.retry.context import RetryContext
from idemlint.analysis.retry.exits import ends_by_raising
from idemlint.analysis.retry.factories import made_by_factory
from idemlint.analysis.retry.not_retries import supervises_a_service
from idemlint.analysis.retry.reach import QuietNames, dead_handlers, in_dead_handler
from idemlint.analysis.retry.read_only import only_looks_up, raises_until_ready, reads_only
from idemlint.analysis.retry.sends import sends_a_write_among
from idemlint.knowledge.retries import (
    BACKOFF,
    CELERY,
    CELERY_TASK_KEYWORDS,
    DRAMATIQ,
    EXCEPTION_TESTS,
    GENERATOR_BLIND,
    HUEY,
    RESULT_TESTS,
    RETRY_DECORATORS,
    RETRY_PACKAGE,
    RETRYING,
    RQ,
    RQ_PREFIX,
    STAMINA,
    TENACITY,
    UNTIL_FAILURE_TESTS,
)

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


@dataclass(frozen=True)
class InheritedSettings:
    """What the project index knows that decides what is retried: the Celery settings a
    `base=` class defined elsewhere declares (by its expression), and the position at which a
    function defined elsewhere takes what it runs again (by the call): a task whose `.retry()`
    it calls, or a callable it calls once per attempt (`with_retries(lambda: ...)`). Which of
    the two the argument there is tells them apart: the task hands over itself (`self`), a
    caller with work to retry a lambda or a function."""

    of_base: Callable[[cst.BaseExpression], frozenset[str]]
    retries_task_at: Callable[[cst.Call], int | None]
    # the functions that let no exception out (`retry/reach.py`): a retry around calls to them never runs
    quiet: QuietNames | None = None
    # the retry decorator (`tenacity.retry`) an imported name was bound to in another module
    # (`from .retry_config import api_retry`): its settings are judged there
    retry_decorator: Callable[[cst.BaseExpression], str | None] | None = None
    # whether a class descends from a thread or process class through bases defined elsewhere
    thread_class: Callable[[cst.ClassDef], bool] | None = None


def classify_function(
    model: ModuleModel, function: cst.FunctionDef, inherited: InheritedSettings | None = None
) -> RetryContext | None:
    """The retry decorator or retrying task decorator on `function`, if any. `inherited`
    names the Celery settings of a `base=` class defined in another module (the project
    index knows them)."""
    for decorator in function.decorators:
        expr = decorator.decorator
        call = expr if isinstance(expr, cst.Call) else None
        name = model.qualname(call.func if call else expr)
        made = made_by_factory(model, expr)  # `@task(shared=False)`, `def task(**kw): return app.task(**kw, ...)`
        if made is not None:
            name, call = made
        if name is None:
            continue
        library, label = RETRY_DECORATORS.get(name), f"@{name}"
        if library is None and call is None and isinstance(expr, cst.Name):
            call = _retry_decorator_named(
                model, expr
            )  # `retry_timeout = backoff.on_exception(...)`, then `@retry_timeout`
            name = (model.qualname(call.func) if call is not None else None) or name
            library, label = RETRY_DECORATORS.get(name), f"@{expr.value} ({name})"
        elsewhere = None
        if library is None and call is None and inherited is not None and inherited.retry_decorator is not None:
            elsewhere = inherited.retry_decorator(expr)  # `from .retry_config import api_retry`, then `@api_retry`
            library, label = RETRY_DECORATORS.get(elsewhere or ""), f"@{model.dotted(expr)} ({elsewhere})"
        if library in GENERATOR_BLIND and decorator is function.decorators[-1] and makes_a_generator(model, function):
            return None  # the call hands back a generator at once (no decorator below runs it through)
        if library is not None and call is not None and single_attempt(model, call):
            return None  # `@retry(stop=stop_after_attempt(1))`: one try, nothing runs again
        if library is not None and supervises_a_service(model, function, inherited.thread_class if inherited else None):
            return None  # a supervisor: it restarts a service (`while not stop.is_set():`, a thread starting one)
        quiet = inherited.quiet if inherited is not None else None
        if library is not None and goes_round_on_errors_only(model, library, call):
            if quiet is not None and quiet.body_ends_every_failure(model, function):
                return None  # `try: ... except Exception: return False`: no error reaches the decorator
        if library is not None:
            polls = raises_until_ready(model, function) or reads_until_answered(model, library, call, function)
            kind = "poll" if polls else "decorator"
            return RetryContext(kind, library, function, decorator, call, label, settings_elsewhere=bool(elsewhere))
        task = _task_retry(model, function, name, call, inherited)
        if task is not None:
            library, label, dead = task
            return RetryContext("task", library, function, decorator, call, label, dead_handlers=dead)
    return None


def reads_until_answered(model: ModuleModel, library: str, call: cst.Call | None, function: cst.FunctionDef) -> bool:
    """`@retrying.retry(retry_on_result=lambda gone: gone is False)`, tenacity's `retry=
    retry_if_result(lambda r: r is None)` (also with a failed read it rides out: `|
    retry_if_exception_type(...)`), `@backoff.on_predicate(...)`: the decorator goes round on
    what the function answered. Where the function sends no write and the test of its answer
    names no failure (a status code, `ok`, an error), it re-reads until the answer says ready:
    a poll, whatever failed reads it also rides out. So is tenacity's `retry_unless_exception_type
    (Gone)` around a function that answers nothing and only looks up (`get_commands_status(node)`):
    it goes round on every answer, waiting for the call to fail with the type named (the agent
    gone, the process ended)."""
    body = list(model.iter_nodes(function.body))
    if library == TENACITY and any(model.call_name(c) in UNTIL_FAILURE_TESTS for c in _calls(_tests(model, call))):
        answers_nothing = all(n.value is None for n in body if isinstance(n, cst.Return))
        return answers_nothing and only_looks_up(model, function)
    test = _result_test(model, library, call)
    if test is None and not (
        _result_test(model, library, call, by_name=True)
        and answers_yes_or_no(model, function)
        and reads_only(model, body)
    ):
        return False  # a predicate by name reads only a yes or no the function's own tests gave
    if test is not None and says_an_outcome(model, test):
        return False
    if any(
        isinstance(n, (cst.ExceptHandler, cst.ExceptStarHandler)) and not ends_by_raising(n.body.body) for n in body
    ):
        return False  # `except RequestException: return None`: a failure turned into the answer it goes round on
    answers = [n.test for n in body if isinstance(n, (cst.If, cst.IfExp))]
    answers += [n.value for n in body if isinstance(n, cst.Return) and n.value is not None]
    # `return r.json() if r.status_code == 200 else None`, `return r.ok`: a failed answer goes round too
    sends = sends_a_write_among(model, body)
    return not any(says_an_outcome(model, a) for a in answers) and not sends


def goes_round_on_errors_only(model: ModuleModel, library: str, call: cst.Call | None) -> bool:
    """A decorator known to go round only on an error the function raised, never on what it
    answered: backoff's `on_exception`, retrying without `retry_on_result=`, stamina, the
    `retry` package, tenacity with no `retry=` or one whose every alternative is a test of the
    exception (not `retry_if_result`, not `retry_unless_exception_type`, which goes round on
    every answer, not a name or a lambda it cannot read)."""
    if library == BACKOFF:
        return call is None or not (model.qualname(call.func) or "").endswith("on_predicate")
    if library == RETRYING:
        return call is None or keyword(call, "retry_on_result") is None
    if library == TENACITY:
        if call is None or keyword(call, "retry") is None:
            return True
        tests = _tests(model, call)
        return all(isinstance(t, cst.Call) and model.call_name(t) in EXCEPTION_TESTS for t in tests)
    return library in (STAMINA, RETRY_PACKAGE)


def _tests(model: ModuleModel, call: cst.Call | None) -> list[cst.BaseExpression]:
    """The alternatives a tenacity decorator's `retry=` goes round on (`tenacity_alternatives`)."""
    retry = keyword(call, "retry") if call is not None else None
    return tenacity_alternatives(model, retry.value) if retry is not None else []


def _calls(expressions: list[cst.BaseExpression]) -> list[cst.Call]:
    return [e for e in expressions if isinstance(e, cst.Call)]


def tenacity_alternatives(model: ModuleModel, expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The tests a tenacity `retry=` goes round on any of: the parts of a `|` or a `retry_any(...)`,
    whatever each is (a call, a name, a lambda, an `&` that narrows two)."""
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, cst.BitOr):
        return tenacity_alternatives(model, expr.left) + tenacity_alternatives(model, expr.right)
    if isinstance(expr, cst.Call) and (model.call_name(expr) or "").endswith("retry_any"):
        return [part for a in expr.args for part in tenacity_alternatives(model, a.value)]
    return [expr]


def _result_test(
    model: ModuleModel, library: str, call: cst.Call | None, by_name: bool = False
) -> cst.BaseExpression | None:
    """The test of the answer a decorator goes round on, where it is a lambda (backoff's
    `on_predicate` without one tests for a falsy answer: its own name), else None; `by_name`:
    where it is a function named instead (`retry_if_result(plugin.is_false)`)."""
    if library == BACKOFF and call is not None and (model.qualname(call.func) or "").endswith("on_predicate"):
        given = keyword(call, "predicate") or positional(call, 1)
        return call.func if given is None else given.value if isinstance(given.value, cst.Lambda) else None
    argument = keyword(call, "retry_on_result") if library == RETRYING and call is not None else None
    if library == TENACITY and call is not None:
        results = [test for test in _calls(_tests(model, call)) if model.call_name(test) in RESULT_TESTS]
        if len(results) == 1:
            argument = results[0].args[0] if results[0].args else None
    if argument is not None and not by_name and isinstance(argument.value, cst.Name):
        return returned_test(model, argument.value.value)  # `def _is_pending(lb): return lb.status == ...`
    kind = (cst.Name, cst.Attribute) if by_name else cst.Lambda
    return argument.value if argument is not None and isinstance(argument.value, kind) else None


def single_attempt(model: ModuleModel, call: cst.Call) -> bool:
    """`stop=stop_after_attempt(1)`, `max_tries=1`, `attempts=1`: one try, no retry."""
    for arg in call.args:
        value = arg.value
        if arg.keyword is not None and arg.keyword.value in (
            "max_tries",
            "attempts",
            "tries",
            "stop_max_attempt_number",
        ):
            if isinstance(value, cst.Integer) and value.value == "1":
                return True
        if arg.keyword is not None and arg.keyword.value == "stop":
            # `stop=stop_after_attempt(1)`, directly or through a constant (`stop=_NO_RETRY`)
            stops = [n for n in origin_nodes(model, value) if isinstance(n, cst.Call)]
            if len(stops) == 1 and (model.call_name(stops[0]) or "").endswith("stop_after_attempt"):
                first = stops[0].args[0].value if stops[0].args else None
                return isinstance(first, cst.Integer) and first.value == "1"
    return False


def _retry_decorator_named(model: ModuleModel, name: cst.Name) -> cst.Call | None:
    """The retry decorator a module binds to a name once (`retry_timeout =
    backoff.on_exception(backoff.expo, Timeout, max_tries=2)`), for `@retry_timeout`."""
    bindings = model.bindings_of(model.module, name.value)
    value = bindings[0].value if len(bindings) == 1 else None
    if isinstance(value, cst.Call) and RETRY_DECORATORS.get(model.qualname(value.func) or "") is not None:
        return value
    return None


def named_retry_decorators(model: ModuleModel) -> list[tuple[str, cst.Call, str]]:
    """The retry decorators the module binds to a module-level name once (`api_retry =
    retry(stop=..., wait=...)`): (the name, the call, the decorator's qualified name)."""
    found: list[tuple[str, cst.Call, str]] = []
    for statement in model.module.body:
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if not isinstance(small, cst.Assign) or len(small.targets) != 1:
            continue
        target = small.targets[0].target
        if not isinstance(target, cst.Name) or not isinstance(small.value, cst.Call):
            continue
        call = _retry_decorator_named(model, target)
        name = model.qualname(call.func) if call is not None else None
        if call is small.value and name is not None and not single_attempt(model, call):
            found.append((target.value, call, name))
    return found


def bound_retry_decorators(model: ModuleModel, applied: set[cst.Call]) -> list[RetryContext]:
    """The named retry decorators the module does not apply itself (a `retry_config.py` other
    modules import): each is a policy, judged where it is written. `applied`: the calls the
    module's own contexts carry."""
    return [
        RetryContext("decorator", RETRY_DECORATORS[qualname], call, call, call, f"{name} ({qualname})")
        for name, call, qualname in named_retry_decorators(model)
        if call not in applied
    ]


def _task_retry(
    model: ModuleModel,
    function: cst.FunctionDef,
    name: str,
    call: cst.Call | None,
    inherited: InheritedSettings | None,
) -> tuple[str, str, frozenset[cst.CSTNode]] | None:
    """The task queue, the label and the handlers no failure reaches, where the decorator makes a retried task."""
    last = name.rsplit(".", 1)[-1]
    keywords = {k: a.value for k, a in task_keywords(model, call).items()}
    base = inherited_base(call)
    from_base = inherited.of_base(base) if inherited is not None and base is not None else frozenset()
    if last == "actor" and (DRAMATIQ in name or name == "actor"):
        retries = keywords.get("max_retries")
        if isinstance(retries, cst.Integer) and retries.value == "0":
            return None
        return DRAMATIQ, "Dramatiq actor (retried by default)", frozenset()
    if last in ("task", "db_task", "periodic_task", "db_periodic_task") and "retries" in keywords:
        retries = keywords["retries"]
        if isinstance(retries, cst.Integer) and retries.value == "0":
            return None
        return HUEY, f"@{name}(retries=...)", frozenset()
    celery_like = (
        last == "shared_task"
        or last == "task"
        and (CELERY in name or bool(CELERY_TASK_KEYWORDS & keywords.keys()) or call is None or base is not None)
    )
    if not celery_like:
        return None
    quiet = inherited.quiet if inherited is not None else None
    dead = dead_handlers(model, function, quiet)
    if quiet is None or not quiet.body_ends_every_failure(model, function):  # else `autoretry_for` never fires
        if "autoretry_for" in keywords:
            return CELERY, "Celery task with autoretry_for", dead
        if "autoretry_for" in from_base:
            return CELERY, "Celery task with autoretry_for (from its base class)", dead
    if _calls_self_retry(model, function, inherited, dead):
        return CELERY, "Celery task that calls self.retry()", dead
    if _is_true(keywords.get("acks_late")) and _is_true(keywords.get("task_reject_on_worker_lost")):
        return CELERY, "Celery task with acks_late and task_reject_on_worker_lost", dead
    return None


def _is_true(expr: cst.BaseExpression | None) -> bool:
    return isinstance(expr, cst.Name) and expr.value == "True"


def _calls_self_retry(
    model: ModuleModel, function: cst.FunctionDef, inherited: InheritedSettings | None, dead: frozenset[cst.CSTNode]
) -> bool:
    """`self.retry()` in the bound task, or in a helper or context manager the task hands
    itself to (`retry_on_network(self, exc)`, `with retrying(self):`), here or elsewhere; not
    in a handler no failure reaches (`dead`)."""
    params = function.params.params
    if not params:
        return False
    owner = params[0].name.value
    for node in model.iter_nodes(function.body):
        if not isinstance(node, cst.Call) or in_dead_handler(model, node, dead):
            continue
        if model.dotted(node.func) == f"{owner}.retry":
            return True
        position = next(
            (i for i, a in enumerate(a for a in node.args if a.keyword is None) if _is_name(a.value, owner)), None
        )
        if position is None:
            continue
        helper = local_callee(model, node)
        if helper is not None and retried_parameter(model, helper) == position:
            return True
        if helper is None and inherited is not None and inherited.retries_task_at(node) == position:
            return True
    return False


def retried_parameter(model: ModuleModel, function: cst.FunctionDef) -> int | None:
    """The position (after `self`/`cls`) of the parameter whose `.retry()` the function calls:
    a helper handed the Celery task object."""
    names = positional_parameters(model, function)
    for node in model.iter_nodes(function.body):
        if (
            isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "retry"
            and isinstance(node.func.value, cst.Name)
            and node.func.value.value in names
        ):
            return names.index(node.func.value.value)
    return None


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def enqueued_with_retry(model: ModuleModel) -> list[RetryContext]:
    """RQ: `queue.enqueue(charge, order_id, retry=Retry(max=3))` re-runs `charge`."""
    found = []
    for call in model.calls:
        if not isinstance(call.func, cst.Attribute) or not call.func.attr.value.startswith("enqueue"):
            continue
        retry = keyword(call, "retry")
        if retry is None or not isinstance(retry.value, cst.Call):
            continue
        if not (model.call_name(retry.value) or "").startswith(RQ_PREFIX):
            continue
        job = call.args[0].value if call.args and call.args[0].keyword is None else None
        target = model.module_defs.get(job.value) if isinstance(job, cst.Name) else None
        if isinstance(target, cst.FunctionDef):
            found.append(RetryContext("task", RQ, target, retry.value, retry.value, "RQ job enqueued with Retry"))
    return found


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
        for key, setting in class_settings(base).items():
            out.setdefault(key, setting)
    return out


def class_settings(owner: cst.ClassDef) -> dict[str, ClassSetting]:
    """The Celery retry settings a Task class declares in its body (`autoretry_for = (...)`)."""
    found: dict[str, ClassSetting] = {}
    for line in owner.body.body:
        if isinstance(line, cst.SimpleStatementLine):
            for st in line.body:
                if isinstance(st, cst.Assign) and len(st.targets) == 1 and isinstance(st.targets[0].target, cst.Name):
                    key = st.targets[0].target.value
                    if key in CELERY_TASK_KEYWORDS:
                        found[key] = ClassSetting(st.value, st)
    return found


def inherited_base(call: cst.Call | None) -> cst.BaseExpression | None:
    """The `base=` class a task decorator names, defined here or elsewhere."""
    for a in call.args if call is not None else ():
        if a.keyword is not None and a.keyword.value == "base":
            return a.value
    return None
