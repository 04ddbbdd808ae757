"""What each function does itself, before any call is followed: the first fact of each kind
a `Summary` holds (keys it makes or sends, effects, failures it records, counts it returns,
waits, the state a model method writes), read from the module's shared analyses."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.flow import origin_calls
from idemlint.analysis.keys import fresh_value_name
from idemlint.analysis.policy.lost_races import tests_lost_race
from idemlint.analysis.raising_helpers import counts_to_a_raise, raises_on_the_error
from idemlint.analysis.summary_records import Chain, Step, Summary
from idemlint.analysis.timeouts import unconditional_failure, unconditional_statements

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db import DbAnalysis
    from idemlint.analysis.effects import EffectAnalysis, SideEffect
    from idemlint.analysis.keys import KeySinks
    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.retry import RetryAnalysis
else:
    cst = LazyModule("libcst", globals(), "cst")


def own_params(function: cst.FunctionDef) -> frozenset[str]:
    params = function.params
    return frozenset(p.name.value for p in (*params.posonly_params, *params.params, *params.kwonly_params))


def calls_of(model: ModuleModel, function: cst.FunctionDef) -> list[cst.Call]:
    """The calls in a function's own body (not in nested functions), found once per model."""
    found: dict[cst.FunctionDef, list[cst.Call]] = model.memo.setdefault("calls_of", {})
    calls = found.get(function)
    if calls is None:
        calls = found[function] = [node for node in model.iter_nodes(function.body) if type(node) is cst.Call]
    return calls


def unconditional_calls(model: ModuleModel, function: cst.FunctionDef) -> set[cst.Call]:
    """The calls a function makes every time it runs (`finish(order)` in its own body)."""
    return {
        node
        for statement in unconditional_statements(function.body)
        for node in model.iter_nodes(statement)
        if isinstance(node, cst.Call)
    }


def direct_facts(
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
        if retry.context_of(request.call) is None and scope not in verbs and request.function is None:
            facts.setdefault(scope, {})["verb_effect"] = (Step(f"{request.operation}()", request.call),)
            verbs[scope] = (request.parameter, request.operation)
    for returning, setting in _returned_settings(model).items():
        facts.setdefault(returning, {})["returns_setting"] = setting
    for constructor in model.functions:
        jitter = _opt_in_jitter(constructor)
        if jitter is not None and _draws_at_random_itself(model, constructor, jitter.name.value):
            jitter = None  # the class spreads its waits anyway (the parameter only adds to that)
        if jitter is not None:
            facts.setdefault(constructor, {})["opt_in_jitter"] = (Step(jitter.name.value, jitter),)
    for predicate in model.functions:
        if tests_lost_race(model, predicate):
            facts.setdefault(predicate, {})["lost_race_test"] = (Step(predicate.name.value, predicate),)
    bounds: dict[cst.CSTNode, tuple[str, ...]] = {}
    for judge in model.functions:
        raised = raises_on_the_error(model, judge)
        if raised is not None:
            facts.setdefault(judge, {})["gives_up"] = (Step(f"{judge.name.value}() raises", raised),)
        counted, raising = counts_to_a_raise(model, judge)
        if raising is not None:
            facts.setdefault(judge, {})["raises_past"] = (Step(f"{judge.name.value}() raises", raising),)
            bounds[judge] = counted
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
            returns_setting=found.get("returns_setting"),
            opt_in_jitter=found.get("opt_in_jitter"),
            lost_race_test=found.get("lost_race_test"),
            gives_up=found.get("gives_up"),
            raises_past=found.get("raises_past"),
            past_params=bounds.get(scope, ()),
        )
        for scope, found in facts.items()
    }


def _returns_changing_state(model: ModuleModel, function: cst.FunctionDef, values: list[cst.BaseExpression]) -> bool:
    """A returned `self.x` that a method of the class other than `__init__` assigns: state the
    object moves (a backoff that grows or draws at random), not a setting."""
    owner = model.enclosing_class(function)
    returned = {
        n.attr.value
        for v in values
        for n in (v, *model.iter_nodes(v))
        if type(n) is cst.Attribute and type(n.value) is cst.Name and n.value.value == "self"
    }
    if owner is None or not returned:
        return False
    for target, _value, statement in model.attribute_assigns:
        if type(target.value) is not cst.Name or target.value.value != "self" or target.attr.value not in returned:
            continue
        method = model.scope_of(statement)
        if (
            isinstance(method, cst.FunctionDef)
            and method.name.value != "__init__"
            and model.enclosing_class(method) is owner
        ):
            return True
    return False


def _opt_in_jitter(function: cst.FunctionDef) -> cst.Param | None:
    """`def __init__(self, backoff_factor=0, backoff_jitter=0)`: a constructor taking a wait and a
    jitter that defaults to none, so an object built without naming it waits the same for all."""
    from idemlint.knowledge.retries import JITTER_SETTING, WAIT_SETTING

    if function.name.value != "__init__":
        return None
    params = [*function.params.params, *function.params.kwonly_params]
    if not any(WAIT_SETTING.search(p.name.value) and not JITTER_SETTING.search(p.name.value) for p in params):
        return None
    for param in params:
        default = param.default
        if default is None or not JITTER_SETTING.search(param.name.value):
            continue
        if isinstance(default, (cst.Integer, cst.Float)) and not default.value.strip("0._"):
            return param
        if isinstance(default, cst.Name) and default.value in ("None", "False"):
            return param
    return None


def _draws_at_random_itself(model: ModuleModel, constructor: cst.FunctionDef, jitter: str) -> bool:
    """A method of the constructor's class that computes a wait (named for one) and draws a
    random number without reading the jitter parameter (`def get_backoff_time(self): ... *
    random()`): its waits vary whatever the caller passes."""
    from idemlint.knowledge.retries import RANDOM_DRAW, WAIT_SETTING

    owner = model.enclosing_class(constructor)
    if owner is None:
        return False
    for method in owner.body.body:
        if (
            not isinstance(method, cst.FunctionDef)
            or method is constructor
            or not WAIT_SETTING.search(method.name.value)
        ):
            continue  # a method that computes a wait (`get_backoff_time`), not `pick_host`
        nodes = list(model.iter_nodes(method.body))
        if any(isinstance(n, cst.Name) and n.value == jitter for n in nodes):
            continue
        if any(isinstance(n, cst.Attribute) and n.attr.value == jitter for n in nodes):
            continue
        if any(isinstance(n, cst.Call) and RANDOM_DRAW.search(model.call_name(n) or "") for n in nodes):
            return True
    return False


def _returned_settings(model: ModuleModel) -> dict[cst.CSTNode, Chain]:
    """Functions whose every return gives a value with no random part and no call, that no
    parameter changes: `def get_delay_ms(self): return self.delay_ms`."""
    from idemlint.analysis.policy.delays import fixed_on_every_way

    found: dict[cst.CSTNode, Chain] = {}
    for function in model.functions:
        returns = model.returns.get(function) or []
        values = [r.value for r in returns if r.value is not None]
        if not values or len(values) != len(returns) or len(values) > 3:
            continue
        if any(type(n) is cst.Call for v in values for n in model.iter_nodes(v)):
            continue  # another function's result: not judged here
        if _returns_changing_state(model, function, values):
            continue  # `self.delay = min(cap, random.uniform(...)); return self.delay`: not a setting
        if all(fixed_on_every_way(model, v) for v in values):
            found[function] = (Step(f"returns {cst.Module([]).code_for_node(values[0])}", returns[0]),)
    return found


def _fixed_waits(model: ModuleModel, retry: RetryAnalysis) -> dict[cst.CSTNode, tuple[Chain, str]]:
    """Functions that sleep on every call, outside any retry of their own, for a delay with
    no random part: (the chain, "") or, when the delay is computed from one parameter,
    (the chain, that parameter)."""
    from idemlint.analysis.policy.delays import delay_parameter, deterministic_delay
    from idemlint.analysis.retry import SLEEPS

    found: dict[cst.CSTNode, tuple[Chain, str]] = {}
    for function in model.functions:
        always = unconditional_calls(model, function) | _calls_before_yes(model, function)
        for call in calls_of(model, function):  # in source order: the first sleep decides
            if call not in always:
                continue
            name = model.call_name(call)
            if name not in SLEEPS or not call.args or retry.context_of(call) is not None or function in found:
                continue
            delay = call.args[0].value
            if isinstance(delay, (cst.Integer, cst.Float)) and not delay.value.strip("0._"):
                continue  # `await asyncio.sleep(0)` yields to the loop: no wait
            chain = (Step(f"{name}()", call),)
            if deterministic_delay(model, delay):
                found[function] = (chain, "")
            elif (parameter := delay_parameter(model, delay)) is not None:
                found[function] = (chain, parameter)
    return found


def _calls_before_yes(model: ModuleModel, function: cst.FunctionDef) -> set[cst.Call]:
    """The calls a retry step makes whenever it answers yes: `def handle_retry(self): if
    self.n < self.max: time.sleep(...); self.n += 1; return True` / `return False`. Each
    `return True` is preceded, in its own block, by a sleep; every other return says no."""
    from idemlint.analysis.retry import SLEEPS

    returns = model.returns.get(function, ())
    yes = [r for r in returns if isinstance(r.value, cst.Name) and r.value.value == "True"]
    if not yes or any(r not in yes and not _says_no(r.value) for r in returns):
        return set()
    found: set[cst.Call] = set()
    for ret in yes:
        before = _statements_before(model, ret)
        if before is None:
            return set()
        calls = [n for statement in before for n in model.iter_nodes(statement) if isinstance(n, cst.Call)]
        if not any(model.call_name(n) in SLEEPS for n in calls):
            return set()  # a yes that does not wait
        found.update(calls)
    return found


def _statements_before(model: ModuleModel, ret: cst.Return) -> list[cst.CSTNode] | None:
    """What runs just before a `return` in its own block, on its line (`time.sleep(1); return
    True`) and on the lines above it; None where the block is not a plain sequence."""
    line = model.parents.get(ret)
    if not isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
        return None
    small: list[cst.CSTNode] = list(line.body)
    before: list[cst.CSTNode] = small[: small.index(ret)] if ret in small else []
    if isinstance(line, cst.SimpleStatementSuite):
        return before  # `if ok: time.sleep(1); return True`: the suite is the whole block
    block = model.parents.get(line)
    body = list(block.body) if isinstance(block, (cst.IndentedBlock, cst.Module)) else []
    if line not in body:
        return None
    return [*(s for s in body[: body.index(line)] if isinstance(s, cst.SimpleStatementLine)), *before]


def _says_no(value: cst.BaseExpression | None) -> bool:
    return value is None or isinstance(value, cst.Name) and value.value in ("False", "None")


def _fresh_call(model: ModuleModel, expr: cst.BaseExpression) -> Chain | None:
    for call in origin_calls(model, expr):
        name = fresh_value_name(model, call)
        if name is not None:
            return (Step(name, call),)
    return None


def _unkeyed(effect: SideEffect) -> bool:
    return not effect.retry_safe and effect.keyed is False


# methods whose result, returned, may be a write's row count
_WRITE_METHODS = frozenset({"update", "aupdate", "execute", "executemany"})


def returned_counts(model: ModuleModel, db: Callable[[], DbAnalysis]) -> dict[cst.CSTNode, Chain]:
    """Functions that return the row count of a conditional update, which then says to the
    caller whether this was a duplicate: `return Order.objects.filter(pk=pk,
    status="pending").update(status="paid")`, `return cur.rowcount`, `return await
    conn.execute("UPDATE ... WHERE ... AND status = 'pending'")`."""
    returned, by_rowcount = _write_results_returned(model)
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


def dropped_counts(model: ModuleModel, db: Callable[[], DbAnalysis]) -> dict[cst.CSTNode, Chain]:
    """Functions that run a conditional update, drop its count and hand their caller nothing
    (`def close(pk): Session.objects.filter(pk=pk, status="open").update(status="closed")`).
    The update converges and nothing after it acts, so it is not reported where it is; a caller
    that acts after calling such a function acts for a duplicate too, and is reported there."""
    if not any(type(c.func) is cst.Attribute and c.func.attr.value in _WRITE_METHODS for c in model.calls):
        return {}
    from idemlint.analysis.db.counts import count_conditions, is_entry_point, nobody_acts_on

    analysis = db()
    found: dict[cst.CSTNode, Chain] = {}
    for write in analysis.writes:
        scope = model.scope_of(write.node)
        if write.count_read or write.call is None or scope in found or not isinstance(scope, cst.FunctionDef):
            continue
        conditions = count_conditions(model, analysis, write)
        if conditions and not is_entry_point(model, scope) and nobody_acts_on(model, write, conditions):
            what = ", ".join(sorted({p.column for p in conditions}))
            found[scope] = (Step(f"an update conditional on {what}", write.call),)
    return found


def returns_write_results(model: ModuleModel) -> bool:
    """Whether a function of the module returns what a write call gives back or a cursor's
    `rowcount`: without one, no function here returns a row count of its own."""
    returned, by_rowcount = _write_results_returned(model)
    return bool(returned or by_rowcount)


def _write_results_returned(model: ModuleModel) -> tuple[dict[cst.CSTNode, set[cst.Call]], set[cst.CSTNode]]:
    """Per function, the write calls (`.update(`, `.execute(`) its returns give back, and the
    functions that return a `rowcount`; found once per model."""
    known = model.memo.get("write_results_returned")
    if known is not None:
        return known
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
    model.memo["write_results_returned"] = (returned, by_rowcount)
    return returned, by_rowcount


def state_writes(
    model: ModuleModel, db: Callable[[], DbAnalysis]
) -> dict[cst.CSTNode, tuple[tuple[str, str, str], Chain, str]]:
    """Functions that set a state column to a literal or constant and save it, with no test
    deciding whether they do, on their own instance (`def ship(self): self.status = "shipped";
    self.save()`) or on the instance they are given (`def mark_sending(n): n.status = "sending";
    db.session.commit()`): {function: ((column, value kind, text), chain, "self" or the parameter)}."""
    if not any(type(target.value) is cst.Name for target, _v, _s in model.attribute_assigns):
        return {}
    from idemlint.analysis.db.decisions import deciding_tests

    analysis = db()
    found: dict[cst.CSTNode, tuple[tuple[str, str, str], Chain, str]] = {}
    for write in analysis.writes:
        scope = model.scope_of(write.node)
        if write.kind != "attribute" or write.instance is None or scope in found:
            continue
        if not isinstance(scope, cst.FunctionDef) or not owned_instance(model, scope, write.instance):
            continue
        for column, (kind, text) in write.sets.items():
            if not analysis.is_state_column(column) or deciding_tests(model, write.node):
                continue
            value = write.values.get(column)
            if kind not in ("literal", "constant") and isinstance(value, cst.Name) and value.value in own_params(scope):
                kind, text = "param", value.value  # `self.status = status`: what the caller passes
            if kind in ("literal", "constant", "param"):
                shown = repr(text) if kind == "literal" else text
                step = Step(f"{write.instance}.{column} = {shown}", write.node)
                found[scope] = ((column, kind, text), (step,), write.instance)
                break
    return found


def owned_instance(model: ModuleModel, function: cst.FunctionDef, instance: str) -> bool:
    """`self` in a method, or a parameter the function never rebinds: an instance its caller has."""
    if instance == "self":
        return model.enclosing_class(function) is not None
    if instance == "cls" or instance not in own_params(function):
        return False
    return all(binding.kind == "param" for binding in model.bindings_of(function, instance))
