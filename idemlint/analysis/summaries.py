"""What a function does that its callers inherit: one mechanism for looking through calls.

IDM001 needs to know that `make_key()` returns a fresh random key or that `send(order)` puts
one in an `Idempotency-Key` header; IDM301 that `notify(order)` POSTs without a key; IDM302
that `charge(order)` calls another system at all. Each of those is a `Summary` of a function,
built from the same shared analyses the rules read (key sinks, effects, retry contexts) and
followed through calls: first within the module (a few rounds reach helpers that call
helpers), then, when a project index is given, into other modules, whose summaries were built
the same way (`analysis/project.py` maps files to `ModuleSummaries`, then follows the edges).

A chain of `Step`s says how a fact was reached, from the call in the function down to the
origin (`send()` -> `_post()` -> `requests.post()`); steps in the file being checked hold their
node (lines are resolved only for files with findings), steps elsewhere hold a path and line.

The records (`Summary`, `Step`, how arguments bind parameters) are in `summary_records`; what
each function does itself, before calls are followed, is in `direct_facts`; this module
follows the calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.calls import call_target
from idemlint.analysis.db.absent_rows import inserted_rows
from idemlint.analysis.db.adding_methods import built_writes
from idemlint.analysis.db.decisions import guarding_tests
from idemlint.analysis.direct_facts import (
    calls_of,
    direct_facts,
    dropped_counts,
    own_params,
    returned_counts,
    state_writes,
    unconditional_calls,
)
from idemlint.analysis.duplicate_answers import absorbed_through
from idemlint.analysis.flow import origin_calls
from idemlint.analysis.inheritance import CallSite, inherit
from idemlint.analysis.model import iter_nodes, local_callee, method_of, positional_parameters, string_value
from idemlint.analysis.request_parts import asks_for_a_token
from idemlint.analysis.status_errors import status_error_chains, status_error_leaves
from idemlint.analysis.summary_records import (
    MAX_DEPTH,
    Chain,
    Passed,
    Step,
    Summary,
    fixed_argument,
    passed_arguments,
)
from idemlint.knowledge.http import NOT_IDEMPOTENT_METHODS, WRITE_METHOD_FUNCTIONS
from idemlint.knowledge.repeats import names_a_lookup, words_of

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db import DbAnalysis
    from idemlint.analysis.effects import EffectAnalysis
    from idemlint.analysis.keys import KeySinks
    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.project_index import ProjectIndex
    from idemlint.analysis.retry import RetryAnalysis
else:
    cst = LazyModule("libcst", globals(), "cst")

__all__ = ["MAX_DEPTH", "Callee", "Chain", "ModuleSummaries", "Passed", "Step", "Summary", "passed_arguments"]


@dataclass
class Callee:
    """A called function as the caller's message names it."""

    name: str  # `send_receipt`, `ApiClient.post`
    summary: Summary
    function: cst.FunctionDef | None = None  # when it is in this module
    path: str = ""  # set when the function is in another file
    line: int = 0


@dataclass
class _Edge:
    """A call from a function of this module to a function elsewhere, kept for the project map."""

    target: str
    call: cst.Call
    passed: Passed = ()
    always: bool = False  # made on every call of the function (not under an `if`, a loop, a handler)
    returned: bool = False  # the function returns its result
    sent: bool = False  # the function sends its result as an idempotency key
    retried: bool = False  # inside one of the function's retries
    status_errors_leave: bool = True  # no handler around the call ends an HTTP status error it raises
    duplicates_absorbed: bool = False  # a handler around it takes "exists already" as success


@dataclass
class ModuleSummaries:
    """The summaries of one module's functions."""

    by_function: dict[cst.FunctionDef, Summary] = field(default_factory=dict)
    edges: dict[cst.FunctionDef, list[_Edge]] = field(default_factory=dict)


def summarise(
    model: ModuleModel,
    retry: RetryAnalysis,
    sinks: KeySinks,
    effects: EffectAnalysis,
    module: str = "",
    project: ProjectIndex | None = None,
    db: Callable[[], DbAnalysis] | None = None,
) -> ModuleSummaries:
    """Summaries of every function of the module, followed through calls within it and,
    with a project index, into the rest of the project. `db` gives the module's database
    analysis, asked for only when a function returns what may be a write's row count."""
    result = ModuleSummaries()
    retried = {c.node for c in retry.contexts}
    functions = [f for f in model.functions if f not in retried]
    direct = direct_facts(model, retry, sinks, effects)
    for function, chain in (returned_counts(model, db) if db is not None else {}).items():
        direct[function] = replace(direct.get(function, Summary()), returns_count=chain)
    for function, chain in status_error_chains(model).items():
        direct[function] = replace(direct.get(function, Summary()), raises_status_error=chain)
    for function, chain in (dropped_counts(model, db) if db is not None else {}).items():
        direct[function] = replace(direct.get(function, Summary()), drops_count=chain)
    for function, (written, chain, owner) in (state_writes(model, db) if db is not None else {}).items():
        direct[function] = replace(
            direct.get(function, Summary()), writes_state=written, state_chain=chain, state_owner=owner
        )
    for function, (columns, chain, owner) in (built_writes(model, db) if db is not None else {}).items():
        direct[function] = replace(
            direct.get(function, Summary()), builds_on=columns, built_chain=chain, built_owner=owner
        )
    for function, (models, chain) in inserted_rows(model).items():
        direct[function] = replace(
            direct.get(function, Summary()), inserts_row=chain, inserted_model=models[0], inserted_models=models
        )
    for function in model.functions:
        facts = direct.get(function, Summary())
        if function in retried:  # retried itself: its keys are reported where they are made
            facts = replace(facts, returns_key=None, sends_key=None)
        result.by_function[function] = _with_parameters(model, function, facts)
    sent: dict[cst.CSTNode, set[cst.Call]] = {}
    for sink in sinks.sinks:
        sent.setdefault(model.scope_of(sink.value), set()).update(origin_calls(model, sink.value))
    for _round in range(MAX_DEPTH):
        changed = False
        for function in functions:
            updated = _through_calls(model, retry, result, function, sent.get(function, set()), module, project)
            if updated != result.by_function[function]:
                result.by_function[function] = updated
                changed = True
        if not changed:
            break
    if module:
        for function in model.functions:
            always = unconditional_calls(model, function)
            returned = _returned_calls(model, function)
            result.edges[function] = [
                _Edge(
                    target,
                    call,
                    passed_arguments(call, own_params(function)),
                    call in always,
                    call in returned,
                    call in sent.get(function, set()),
                    retry.context_of(call) is not None,
                    status_error_leaves(model, call),
                    absorbed_through(model, call, target),
                )
                for call in calls_of(model, function)
                if local_callee(model, call) is None and (target := call_target(model, call, module)) is not None
            ]
    return result


def _with_parameters(model: ModuleModel, function: cst.FunctionDef, summary: Summary) -> Summary:
    """Positional parameter names, and the parameters that stand in for a key the function
    would make: `key or str(uuid4())`, `if key is None: key = ...`, `if "Idempotency-Key" not
    in headers: headers[...] = ...`."""
    names = positional_parameters(model, function)
    own = own_params(function) - {"self", "cls"}
    key_params: set[str] = set()
    mints = summary.returns_key or summary.sends_key
    origin = mints[-1].node if mints else None
    if origin is not None:
        for ancestor in model.ancestors(origin):
            if ancestor is function:
                break
            if isinstance(ancestor, cst.BooleanOperation) and isinstance(ancestor.operator, cst.Or):
                if isinstance(ancestor.left, cst.Name):
                    key_params.add(ancestor.left.value)
            if isinstance(ancestor, cst.If):
                key_params.update(n.value for n in iter_nodes(ancestor.test) if isinstance(n, cst.Name))
    return replace(
        summary, params=tuple(names), key_params=frozenset(key_params & own), verb_defaults=_verb_defaults(function)
    )


def _verb_defaults(function: cst.FunctionDef) -> tuple[tuple[str, str], ...]:
    """The parameters whose default is a writing HTTP method, upper-cased: `def send(url,
    method="POST")` sends a POST for every call that leaves `method` out (a GET default binds
    nothing, as a call naming no method does)."""
    params = function.params
    return tuple(
        (param.name.value, method.upper())
        for param in (*params.params, *params.kwonly_params)
        if param.default is not None
        and (method := (string_value(param.default) or "").lower()) in WRITE_METHOD_FUNCTIONS
    )


def callers_naming_a_write(
    model: ModuleModel, function: cst.FunctionDef, parameter: str, seen: set[cst.FunctionDef] | None = None
) -> Iterator[tuple[cst.Call, str]]:
    """The calls in this module to `function` that make its `parameter`, an HTTP method, a
    write that is not safe to repeat (POST or PATCH): by naming one, in any case, or by leaving
    out a parameter whose default is one. A caller that hands on its own parameter
    (`call_endpoint(url, method="POST")` calling `self.do_api_query(..., method=method)`) names
    what its own callers name there, unless it chooses by the method whether to make that
    call (`if method in SAFE_METHODS: return self._send_with_retries(...)`). With the method
    found this way, a request core that retries whatever its callers ask for is known to
    retry a POST. Each function is searched once."""
    binding = Summary(
        params=tuple(positional_parameters(model, function)),
        verb_param=parameter,
        verb_effect=(),
        verb_defaults=_verb_defaults(function),
    )
    seen = set() if seen is None else seen
    seen.add(function)
    for call in model.calls:
        if local_callee(model, call) is not function:
            continue
        caller = model.enclosing_function(call)
        method, forwarded = binding.verb_binding(passed_arguments(call, own_params(caller) if caller else frozenset()))
        if method in NOT_IDEMPOTENT_METHODS and not asks_for_a_token(model, call, None):
            yield call, method  # not one whose body asks for a token (`json={"grant_type": ...}`)
        elif forwarded and caller is not None and caller not in seen and not chosen_by(model, call, forwarded):
            yield from callers_naming_a_write(model, caller, forwarded, seen)


def chosen_by(model: ModuleModel, call: cst.Call, name: str) -> bool:
    """The call is made or skipped by a test on `name` (`if method in SAFE: ...`, or a guard
    before it that leaves): only some of the values the caller is given reach it."""
    return any(name in model.names_read(test) for _refuses, test in guarding_tests(model, call))


def _through_calls(
    model: ModuleModel,
    retry: RetryAnalysis,
    result: ModuleSummaries,
    function: cst.FunctionDef,
    sent: set[cst.Call],
    module: str,
    project: ProjectIndex | None,
) -> Summary:
    """The function's summary extended by one more level of the calls it makes."""
    summary = result.by_function[function]
    returned = _returned_calls(model, function)
    updates: dict[str, Chain] = {}
    always = unconditional_calls(model, function)
    looks_up = names_a_lookup(words_of(function.name.value))
    for call in calls_of(model, function):
        callee = callee_of(model, call, result, module, project)
        if callee is None:
            continue
        site = CallSite(
            Step(f"{callee.name}()", call),
            passed_arguments(call, own_params(function)),
            always=call in always,
            returned=call in returned,
            sent=call in sent,
            retried=retry.context_of(call) is not None,
            fixed=fixed_argument(model, call),
            status_errors_leave=status_error_leaves(model, call),
            duplicates_absorbed=absorbed_through(model, call, callee.name),
        )
        summary = inherit(summary, callee.summary, site, updates, looks_up)
    return replace(summary, **updates) if updates else summary  # type: ignore[arg-type]


def _returned_calls(model: ModuleModel, function: cst.FunctionDef) -> set[cst.Call]:
    """The calls whose result the function returns."""
    return {
        call
        for ret in model.returns.get(function, ())
        if ret.value is not None
        for call in origin_calls(model, ret.value)
    }


def callee_of(
    model: ModuleModel,
    call: cst.Call,
    summaries: ModuleSummaries,
    module: str = "",
    project: ProjectIndex | None = None,
) -> Callee | None:
    """The function `call` runs and what it does: a function of this module, or one of the
    project the index knows. Unknown stays unknown: a call is never matched by name alone."""
    helper = local_callee(model, call) or _constructor_of_module_class(model, call)
    target = call_target(model, call, module) if helper is None else None
    if helper is None and target is not None:
        helper = _method_of_module_class(model, target, module)  # `policy = Backoff(); policy.wait()`
    if helper is not None:
        summary = summaries.by_function.get(helper)
        if summary is None or summary.empty:
            return None
        owner = model.enclosing_class(helper)
        if owner is not None and helper.name.value == "__init__":
            name = owner.name.value  # `ChargeRequest()` runs its `__init__`
        else:
            name = f"{owner.name.value}.{helper.name.value}" if owner is not None and target else helper.name.value
        return Callee(name, summary, helper)
    if project is None or not module or target is None:
        return None
    found = project.function(target) or _own_constructor(project, target)
    if found is None or found[1].empty:
        return None
    qualname, summary, path, line = found
    return Callee(short_name(qualname), summary, None, path, line)


def _own_constructor(project: ProjectIndex, target: str) -> tuple[str, Summary, str, int] | None:
    """`shop.refunds.RefundRequest` -> the `__init__` that class defines itself: a constructor
    is not looked up in bases or implementations (a subclass's would run for another class)."""
    for owner in (target, project.defined_as(target)):
        entry = project.functions.get(f"{owner}.__init__")
        if entry is not None:
            return (f"{owner}.__init__", *entry)
    return None


def _constructor_of_module_class(model: ModuleModel, call: cst.Call) -> cst.FunctionDef | None:
    """`ChargeRequest(amount)` for a class this module defines: the `__init__` it runs."""
    if not isinstance(call.func, cst.Name) or call.func.value in model.imports:
        return None
    found = model.module_defs.get(call.func.value)
    return method_of(found, "__init__") if isinstance(found, cst.ClassDef) else None


def _method_of_module_class(model: ModuleModel, target: str, module: str) -> cst.FunctionDef | None:
    """`shop.jobs.Backoff.wait` for a class this module defines: its method (not a base's)."""
    owner, _, method = target.removeprefix(f"{module}.").partition(".")
    found = model.module_defs.get(owner) if method and "." not in method else None
    return method_of(found, method) if isinstance(found, cst.ClassDef) else None


def short_name(qualname: str) -> str:
    """`shop.payments.client.ApiClient.post` -> `ApiClient.post`; a module function keeps its name;
    a constructor is named by its class (`ApiClient`)."""
    parts = qualname.split(".")
    if len(parts) >= 2 and parts[-1] == "__init__":
        return parts[-2]
    if len(parts) >= 2 and parts[-2][:1].isupper():
        return ".".join(parts[-2:])
    return parts[-1]


def chain_origin(chain: Chain, placeholder: str) -> tuple[str, tuple[tuple[str, cst.CSTNode], ...]]:
    """Where a chain ends, as a message names it: `on line $origin` in this file (the line
    is filled in later), `at shop/client.py:67` in another."""
    origin = chain[-1]
    if origin.node is not None:
        return f"on line ${placeholder}", ((placeholder, origin.node),)
    return f"at {origin.path}:{origin.line}", ()


def via(chain: Chain) -> str:
    """`, via _post()` for the calls between the function and the origin."""
    middle = [step.text for step in chain[:-1]]
    return f", via {' -> '.join(middle)}" if middle else ""


def related_steps(callee: Callee, chain: Chain, verb: str = "calls") -> tuple[Step, ...]:
    """The places a reader follows from the finding to the origin, each saying what happens
    there: the called function when it lives in another file, each call on the way, the origin
    (`_post() calls requests.post()`; with `verb=""`, `finish() state set to 'failed'`...)."""
    steps: list[Step] = []
    if callee.path:
        steps.append(Step(f"{callee.name}() is defined here", path=callee.path, line=callee.line))
    caller = f"{callee.name}()"
    for step in chain[:-1]:
        steps.append(replace(step, text=f"{caller} calls {step.text}"))
        caller = step.text
    origin = chain[-1]
    steps.append(replace(origin, text=f"{caller} {verb} {origin.text}" if verb else f"{caller}: {origin.text}"))
    return tuple(steps)
