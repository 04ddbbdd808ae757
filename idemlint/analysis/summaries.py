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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.calls import call_target
from idemlint.analysis.flow import origin_calls
from idemlint.analysis.keys import fresh_value_name
from idemlint.analysis.model import iter_nodes, local_callee, string_value
from idemlint.analysis.timeouts import unconditional_failure, unconditional_statements

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db import DbAnalysis
    from idemlint.analysis.effects import EffectAnalysis, SideEffect
    from idemlint.analysis.keys import KeySinks
    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.project import ProjectIndex
    from idemlint.analysis.retry import RetryAnalysis
else:
    cst = LazyModule("libcst", globals(), "cst")

# Rounds of following calls: within a module, then across modules. Each round extends a
# chain by one call, so a fact is seen through at most this many helpers.
MAX_DEPTH = 4


@dataclass(frozen=True)
class Step:
    """One link of a chain: what happens (`uuid.uuid4()`, `send()`) and where."""

    text: str
    node: cst.CSTNode | None = None  # in the file being checked
    path: str = ""  # elsewhere in the project (root-relative)
    line: int = 0


Chain = tuple[Step, ...]
# The arguments of a call: (the parameter it binds: a keyword name, or `#0`, `#1`... by
# position; the caller's own parameter it forwards unchanged, or ""; the text of a string
# literal it passes, or "")
Passed = tuple[tuple[str, str, str], ...]


def passed_arguments(call: cst.Call, own_params: frozenset[str] = frozenset()) -> Passed:
    """What a call passes, for matching against a callee's key parameters. Star arguments
    pass nothing we can see."""
    passed: list[tuple[str, str, str]] = []
    position = 0
    for arg in call.args:
        if arg.star:
            continue
        value = arg.value
        source = value.value if isinstance(value, cst.Name) and value.value in own_params else ""
        literal = string_value(value) or (value.value if isinstance(value, (cst.Integer, cst.Float)) else "")
        if arg.keyword is not None:
            passed.append((arg.keyword.value, source, literal))
        else:
            passed.append((f"#{position}", source, literal))
            position += 1
    return tuple(passed)


@dataclass(frozen=True)
class Summary:
    """Facts about one function a caller inherits. Each chain starts at the first step inside
    the function and ends at the origin."""

    returns_key: Chain | None = None  # returns a fresh random key it made
    sends_key: Chain | None = None  # puts a fresh key in a key sink itself
    key_params: frozenset[str] = frozenset()  # `key or uuid4()`: passing one of these supplies the key
    params: tuple[str, ...] = ()  # positional parameters, without self/cls
    unkeyed_effect: Chain | None = None  # calls another system without an idempotency key
    effect: Chain | None = None  # calls another system at all
    effect_operation: str = ""  # the origin effect's operation, e.g. "requests.post"
    records_failure: Chain | None = None  # marks a definite failure on every call (`status = "failed"`)
    returns_count: Chain | None = None  # returns the row count of a conditional update (zero: a duplicate)
    # an unkeyed HTTP request whose method is this parameter (`_request(self, method, path)`):
    # an unkeyed effect of every call that passes POST or PATCH there
    verb_param: str = ""
    verb_effect: Chain | None = None
    verb_operation: str = ""  # the request's operation, e.g. "self.session.request"
    # sleeps on every call for a delay with no random part (`time.sleep(2 ** self.n * 0.1)`),
    # or for one computed from this parameter alone (`def sleep(ms): time.sleep(ms / 1000)`)
    waits_fixed: Chain | None = None
    wait_param: str = ""
    wait_chain: Chain | None = None
    # a method that sets its own instance's state column and saves it, on every call, with no
    # test first: (column, value kind, text) for a literal or constant (`def ship(self):
    # self.status = "shipped"; self.save()`), or (column, "param", the parameter) for the value
    # its caller passes (`def move_to(self, status)`); its callers write that state on their instance
    writes_state: tuple[str, str, str] | None = None
    state_chain: Chain | None = None

    def slot_name(self, slot: str) -> str:
        """The parameter an argument slot (`#0` by position, or a keyword) binds."""
        if slot.startswith("#"):
            index = int(slot[1:])
            return self.params[index] if index < len(self.params) else ""
        return slot

    def verb_binding(self, passed: Passed) -> tuple[str, str]:
        """What a call gives the method parameter: (the literal, upper-cased, or ""; the
        caller's own parameter it forwards there, or "")."""
        if self.verb_effect is None:
            return "", ""
        for slot, source, literal in passed:
            if self.slot_name(slot) == self.verb_param:
                return literal.upper(), source
        return "", ""

    def unkeyed_effect_for(self, passed: Passed) -> tuple[Chain | None, str]:
        """The unkeyed effect a call with these arguments makes, and its operation: the
        function's own, or its request once the call names POST or PATCH."""
        if self.unkeyed_effect is not None:
            return self.unkeyed_effect, self.effect_operation
        method, _forwarded = self.verb_binding(passed)
        if method in ("POST", "PATCH"):
            return self.verb_effect, f"{method} {self.verb_operation}"
        return None, ""

    def fixed_wait_for(self, passed: Passed, fixed_argument: Callable[[str], bool]) -> Chain | None:
        """Whether a call with these arguments sleeps a delay with no random part: always,
        or when what it passes as the delay parameter is fixed (`fixed_argument(slot)`)."""
        if self.waits_fixed is not None:
            return self.waits_fixed
        if self.wait_chain is not None:
            for slot, _source, _literal in passed:
                if self.slot_name(slot) == self.wait_param and fixed_argument(slot):
                    return self.wait_chain
        return None

    def effect_for(self, passed: Passed) -> Chain | None:
        """Whether a call with these arguments calls another system at all: a request whose
        method the call names as a write (POST, PUT, PATCH, DELETE) does; a GET does not."""
        if self.effect is not None:
            return self.effect
        method, _forwarded = self.verb_binding(passed)
        return self.verb_effect if method in ("POST", "PUT", "PATCH", "DELETE") else None

    def key_binding(self, passed: Passed) -> tuple[bool, frozenset[str]]:
        """Whether a call with these arguments gives the function the key it would otherwise
        make, and which of the caller's own parameters it forwards into the function's key
        parameters (the caller then makes the key unless given one: a key parameter of its own)."""
        supplied, forwarded = False, set()
        for slot, source, _literal in passed:
            if self.slot_name(slot) in self.key_params:
                if source:
                    forwarded.add(source)
                else:
                    supplied = True
        return supplied, frozenset(forwarded)

    def supplied_by(self, call: cst.Call) -> bool:
        """The call passes a parameter the function uses instead of making a key (a value
        made outside a retry is the same on every attempt)."""
        supplied, forwarded = self.key_binding(passed_arguments(call))
        return supplied or bool(forwarded)

    @property
    def empty(self) -> bool:
        return not (
            self.returns_key
            or self.sends_key
            or self.unkeyed_effect
            or self.effect
            or self.records_failure
            or self.returns_count
            or self.verb_effect
            or self.waits_fixed
            or self.wait_chain
            or self.state_chain
        )


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
    direct = _direct_facts(model, retry, sinks, effects)
    for function, chain in (_returned_counts(model, db) if db is not None else {}).items():
        direct[function] = replace(direct.get(function, Summary()), returns_count=chain)
    for function, (written, chain) in (_state_writes(model, db) if db is not None else {}).items():
        direct[function] = replace(direct.get(function, Summary()), writes_state=written, state_chain=chain)
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
            always = _unconditional_calls(model, function)
            result.edges[function] = [
                _Edge(target, call, passed_arguments(call, _own_params(function)), call in always)
                for call in _calls_of(model, function)
                if local_callee(model, call) is None
                and retry.context_of(call) is None
                and (target := call_target(model, call, module)) is not None
            ]
    return result


def _own_params(function: cst.FunctionDef) -> frozenset[str]:
    params = function.params
    return frozenset(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params))


def _with_parameters(model: ModuleModel, function: cst.FunctionDef, summary: Summary) -> Summary:
    """Positional parameter names, and the parameters that stand in for a key the function
    would make: `key or str(uuid4())`, `if key is None: key = ...`, `if "Idempotency-Key" not
    in headers: headers[...] = ...`."""
    names = [p.name.value for p in function.params.params]
    if names and names[0] in ("self", "cls") and model.enclosing_class(function) is not None:
        names = names[1:]
    own = _own_params(function) - {"self", "cls"}
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
    return replace(summary, params=tuple(names), key_params=frozenset(key_params & own))


def _direct_facts(
    model: ModuleModel, retry: RetryAnalysis, sinks: KeySinks, effects: EffectAnalysis
) -> dict[cst.CSTNode, Summary]:
    """What each function does itself, before any call is followed (the first fact of each
    kind, in source order)."""
    facts: dict[cst.CSTNode, dict[str, Chain]] = {}
    operations: dict[cst.CSTNode, str] = {}
    for effect in effects.effects:
        scope = model.scope_of(effect.call)
        chain = (Step(f"{effect.operation}()", effect.call),)
        facts.setdefault(scope, {}).setdefault("effect", chain)
        if _unkeyed(effect) and retry.context_of(effect.call) is None:
            facts[scope].setdefault("unkeyed_effect", chain)
            operations.setdefault(scope, effect.operation)
    for function in model.functions:
        for ret in model.returns.get(function, ()):
            fresh = _fresh_call(model, ret.value) if ret.value is not None else None
            if fresh is not None:
                facts.setdefault(function, {}).setdefault("returns_key", fresh)
                break
    for sink in sinks.sinks:
        fresh = _fresh_call(model, sink.value)
        if fresh is not None:
            facts.setdefault(model.scope_of(sink.value), {}).setdefault("sends_key", fresh)
    for function in model.functions:
        failure = unconditional_failure(model, function)
        if failure is not None:
            facts.setdefault(function, {})["records_failure"] = (Step(failure[0], failure[1]),)
    verbs: dict[cst.CSTNode, tuple[str, str]] = {}
    for request in effects.verb_requests:
        scope = model.scope_of(request.call)
        if retry.context_of(request.call) is None and scope not in verbs:
            facts.setdefault(scope, {})["verb_effect"] = (Step(f"{request.operation}()", request.call),)
            verbs[scope] = (request.parameter, request.operation)
    waits = _fixed_waits(model, retry)
    for waiting, (wait, parameter) in waits.items():
        facts.setdefault(waiting, {})["waits_fixed" if not parameter else "wait_chain"] = wait
    return {
        scope: Summary(
            returns_key=found.get("returns_key"),
            sends_key=found.get("sends_key"),
            unkeyed_effect=found.get("unkeyed_effect"),
            effect=found.get("effect"),
            effect_operation=operations.get(scope, ""),
            records_failure=found.get("records_failure"),
            verb_param=verbs.get(scope, ("", ""))[0],
            verb_effect=found.get("verb_effect"),
            verb_operation=verbs.get(scope, ("", ""))[1],
            waits_fixed=found.get("waits_fixed"),
            wait_param=waits[scope][1] if scope in waits else "",
            wait_chain=found.get("wait_chain"),
        )
        for scope, found in facts.items()
    }


def _fixed_waits(model: ModuleModel, retry: RetryAnalysis) -> dict[cst.CSTNode, tuple[Chain, str]]:
    """Functions that sleep on every call, outside any retry of their own, for a delay with
    no random part: (the chain, "") or, when the delay is computed from one parameter,
    (the chain, that parameter)."""
    from idemlint.analysis.policy.delays import delay_parameter, deterministic_delay
    from idemlint.analysis.retry import SLEEPS

    found: dict[cst.CSTNode, tuple[Chain, str]] = {}
    for function in model.functions:
        for call in _unconditional_calls(model, function):
            name = model.call_name(call)
            if name not in SLEEPS or not call.args or retry.context_of(call) is not None or function in found:
                continue
            delay = call.args[0].value
            chain = (Step(f"{name}()", call),)
            if deterministic_delay(model, delay):
                found[function] = (chain, "")
            elif (parameter := delay_parameter(model, delay)) is not None:
                found[function] = (chain, parameter)
    return found


def bound_argument(call: cst.Call, summary: Summary, parameter: str) -> cst.BaseExpression | None:
    """The expression a call passes for one of the function's parameters, by keyword or position."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
    if parameter in summary.params:
        index = summary.params.index(parameter)
        return positional[index].value if index < len(positional) else None
    return None


def fixed_argument(model: ModuleModel, call: cst.Call) -> Callable[[str], bool]:
    """For a call in this file: whether the argument in a slot (`#0`, `ms`) is a delay with
    no random part."""
    from idemlint.analysis.policy.delays import deterministic_delay

    def fixed(slot: str) -> bool:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if slot.startswith("#"):
            index = int(slot[1:])
            value = positional[index].value if index < len(positional) else None
        else:
            value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == slot), None)
        return value is not None and deterministic_delay(model, value)

    return fixed


def literal_number(passed: Passed) -> Callable[[str], bool]:
    """For a call elsewhere in the project: whether a slot holds a number written out."""
    numbers = {slot for slot, _source, literal in passed if literal.replace(".", "", 1).isdigit()}
    return numbers.__contains__


def _fresh_call(model: ModuleModel, expr: cst.BaseExpression) -> Chain | None:
    for call in origin_calls(model, expr):
        name = fresh_value_name(model, call)
        if name is not None:
            return (Step(name, call),)
    return None


def _unkeyed(effect: SideEffect) -> bool:
    return not effect.retry_safe and effect.keyed is False


def _calls_of(model: ModuleModel, function: cst.FunctionDef) -> Iterator[cst.Call]:
    for node in iter_nodes(function.body):
        if isinstance(node, cst.Call):
            yield node


# methods whose result, returned, may be a write's row count
_WRITE_METHODS = frozenset({"update", "aupdate", "execute", "executemany"})


def _returned_counts(model: ModuleModel, db: Callable[[], DbAnalysis]) -> dict[cst.CSTNode, Chain]:
    """Functions that return the row count of a conditional update, which then says to the
    caller whether this was a duplicate: `return Order.objects.filter(pk=pk,
    status="pending").update(status="paid")`, `return cur.rowcount`, `return await
    conn.execute("UPDATE ... WHERE ... AND status = 'pending'")`."""
    returned: dict[cst.CSTNode, set[cst.Call]] = {}
    by_rowcount: set[cst.CSTNode] = set()
    for function in model.functions:
        for ret in model.returns.get(function, ()):
            value = ret.value.expression if isinstance(ret.value, cst.Await) else ret.value
            if isinstance(value, cst.Attribute) and value.attr.value == "rowcount":
                by_rowcount.add(function)
            elif value is not None:
                calls = {
                    c
                    for c in origin_calls(model, value)
                    if isinstance(c.func, cst.Attribute) and c.func.attr.value in _WRITE_METHODS
                }
                if calls:
                    returned.setdefault(function, set()).update(calls)
    if not returned and not by_rowcount:
        return {}
    from idemlint.analysis.db.counts import count_conditions

    analysis = db()
    found: dict[cst.CSTNode, Chain] = {}
    for write in analysis.writes:
        scope = model.scope_of(write.node)
        if scope in found or write.call is None:
            continue
        if write.call in returned.get(scope, ()) or scope in by_rowcount and write.kind == "sql":
            conditions = count_conditions(model, analysis, write)
            if conditions:
                what = ", ".join(sorted({p.column for p in conditions}))
                found[scope] = (Step(f"an update conditional on {what}", write.call),)
    return found


def _state_writes(
    model: ModuleModel, db: Callable[[], DbAnalysis]
) -> dict[cst.CSTNode, tuple[tuple[str, str, str], Chain]]:
    """Methods that set their own state column to a literal or constant and save it, with no
    test deciding whether they do: `def ship(self): self.status = "shipped"; self.save()`."""
    if not any(
        type(target.value) is cst.Name and target.value.value == "self" for target, _v, _s in model.attribute_assigns
    ):
        return {}
    from idemlint.analysis.db.decisions import deciding_tests

    analysis = db()
    found: dict[cst.CSTNode, tuple[tuple[str, str, str], Chain]] = {}
    for write in analysis.writes:
        scope = model.scope_of(write.node)
        if write.kind != "attribute" or write.instance != "self" or scope in found:
            continue
        if not isinstance(scope, cst.FunctionDef) or model.enclosing_class(scope) is None:
            continue
        for column, (kind, text) in write.sets.items():
            if not analysis.is_state_column(column) or deciding_tests(model, write.node):
                continue
            value = write.values.get(column)
            if (
                kind not in ("literal", "constant")
                and isinstance(value, cst.Name)
                and value.value in _own_params(scope)
            ):
                kind, text = "param", value.value  # `self.status = status`: what the caller passes
            if kind in ("literal", "constant", "param"):
                shown = repr(text) if kind == "literal" else text
                found[scope] = ((column, kind, text), (Step(f"self.{column} = {shown}", write.node),))
                break
    return found


def _unconditional_calls(model: ModuleModel, function: cst.FunctionDef) -> set[cst.Call]:
    """The calls a function makes every time it runs (`finish(order)` in its own body)."""
    return {
        node
        for statement in unconditional_statements(function.body)
        for node in model.iter_nodes(statement)
        if isinstance(node, cst.Call)
    }


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
    returned = {
        call
        for ret in model.returns.get(function, ())
        if ret.value is not None
        for call in origin_calls(model, ret.value)
    }
    updates: dict[str, Chain] = {}
    always = _unconditional_calls(model, function)
    for call in _calls_of(model, function):
        callee = callee_of(model, call, result, module, project)
        if callee is None:
            continue
        step = Step(f"{callee.name}()", call)
        inner = callee.summary
        passed = passed_arguments(call, _own_params(function))
        supplied, forwarded = inner.key_binding(passed)
        if not supplied and inner.returns_key and summary.returns_key is None and call in returned:
            updates.setdefault("returns_key", (step, *inner.returns_key))
            summary = replace(summary, key_params=summary.key_params | forwarded)
        elif not supplied and summary.sends_key is None and (inner.sends_key or inner.returns_key and call in sent):
            # `headers={"Idempotency-Key": make_key()}` sends what the helper returns
            updates.setdefault("sends_key", (step, *(inner.sends_key or inner.returns_key or ())))
            summary = replace(summary, key_params=summary.key_params | forwarded)
        unkeyed, operation = inner.unkeyed_effect_for(passed)
        if unkeyed and summary.unkeyed_effect is None and retry.context_of(call) is None:
            updates.setdefault("unkeyed_effect", (step, *unkeyed))
            if not summary.effect_operation:
                summary = replace(summary, effect_operation=operation)
        effect = inner.effect_for(passed)
        if effect and summary.effect is None:
            updates.setdefault("effect", (step, *effect))
        waits = inner.fixed_wait_for(passed, fixed_argument(model, call)) if call in always else None
        if waits and summary.waits_fixed is None and retry.context_of(call) is None:
            updates.setdefault("waits_fixed", (step, *waits))
        forwarded_wait = next(
            (source for slot, source, _l in passed if source and inner.slot_name(slot) == inner.wait_param), ""
        )
        if forwarded_wait and inner.wait_chain and call in always and summary.wait_chain is None:
            updates.setdefault("wait_chain", (step, *inner.wait_chain))
            summary = replace(summary, wait_param=forwarded_wait)
        forwarded_verb = inner.verb_binding(passed)[1]
        if forwarded_verb and inner.verb_effect and summary.verb_effect is None and retry.context_of(call) is None:
            updates.setdefault("verb_effect", (step, *inner.verb_effect))
            summary = replace(summary, verb_param=forwarded_verb, verb_operation=inner.verb_operation)
        if inner.records_failure and summary.records_failure is None and call in always:
            updates.setdefault("records_failure", (step, *inner.records_failure))
        if inner.returns_count and summary.returns_count is None and call in returned:
            updates.setdefault("returns_count", (step, *inner.returns_count))
    return replace(summary, **updates) if updates else summary  # type: ignore[arg-type]


def callee_of(
    model: ModuleModel,
    call: cst.Call,
    summaries: ModuleSummaries,
    module: str = "",
    project: ProjectIndex | None = None,
) -> Callee | None:
    """The function `call` runs and what it does: a function of this module, or one of the
    project the index knows. Unknown stays unknown: a call is never matched by name alone."""
    helper = local_callee(model, call)
    target = call_target(model, call, module) if helper is None else None
    if helper is None and target is not None:
        helper = _method_of_module_class(model, target, module)  # `policy = Backoff(); policy.wait()`
    if helper is not None:
        summary = summaries.by_function.get(helper)
        if summary is None or summary.empty:
            return None
        owner = model.enclosing_class(helper)
        name = f"{owner.name.value}.{helper.name.value}" if owner is not None and target else helper.name.value
        return Callee(name, summary, helper)
    if project is None or not module or target is None:
        return None
    found = project.function(target)
    if found is None or found[1].empty:
        return None
    qualname, summary, path, line = found
    return Callee(short_name(qualname), summary, None, path, line)


def _method_of_module_class(model: ModuleModel, target: str, module: str) -> cst.FunctionDef | None:
    """`shop.jobs.Backoff.wait` for a class this module defines: its method (not a base's)."""
    owner, _, method = target.removeprefix(f"{module}.").partition(".")
    found = model.module_defs.get(owner) if method and "." not in method else None
    if not isinstance(found, cst.ClassDef):
        return None
    return next(
        (s for s in found.body.body if isinstance(s, cst.FunctionDef) and s.name.value == method),
        None,
    )


def short_name(qualname: str) -> str:
    """`shop.payments.client.ApiClient.post` -> `ApiClient.post`; a module function keeps its name."""
    parts = qualname.split(".")
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
