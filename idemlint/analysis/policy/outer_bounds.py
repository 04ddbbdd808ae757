"""What bounds a retry loop from outside its own test: a deadline context around it, or a test
that lets it go round only while an attempt it counts allows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.policy.common import expr_nodes
from idemlint.analysis.retry.exits import guarded_continue
from idemlint.knowledge.retries import DEADLINE_CONTEXT

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def under_a_deadline(model: ModuleModel, loop: cst.For | cst.While) -> bool:
    """The loop runs inside a `with` that cancels it when time runs out (`async with
    async_timeout.timeout(t): while True: ...`), in the same function."""
    for ancestor in model.ancestors(loop):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            return False
        if isinstance(ancestor, cst.With):
            for item in ancestor.items:
                call = item.item
                if isinstance(call, cst.Call):
                    name = (model.call_name(call) or model.dotted(call.func) or "").rsplit(".", 1)[-1]
                    if DEADLINE_CONTEXT.match(name):
                        return True
    return False


def goes_round_only_when_counted(
    model: ModuleModel, loop: cst.For | cst.While, nodes: list[cst.CSTNode], counters: frozenset[str]
) -> bool:
    """`while True: ...; retry = policy.should_retry(attempt=n); if retry: sleep(...); continue`,
    then `break` or `return`: the loop goes round only through tests computed from an attempt
    it counts (`n += 1`), so the test (a retry policy's method, often) owns the bound. A test
    on anything else (`if resp.status == 503: continue`) bounds nothing."""
    body = list(loop.body.body)
    if not counters or not guarded_continue(body):
        return False
    counted = set(counters)
    assigns = [n for n in nodes if isinstance(n, cst.Assign)]
    for _round in range(4):  # names computed from a counter, and from those
        for assign in assigns:
            if any(isinstance(n, cst.Name) and n.value in counted for n in expr_nodes(assign.value)):
                counted.update(t.target.value for t in assign.targets if isinstance(t.target, cst.Name))
    continues = [n for n in nodes if isinstance(n, cst.Continue)]
    guards = [s for s in body if isinstance(s, cst.If) and any(model.is_inside(c, s.body) for c in continues)]
    return (
        bool(guards)
        and all(any(model.is_inside(c, g.body) for g in guards) for c in continues)
        and all(any(isinstance(n, cst.Name) and n.value in counted for n in expr_nodes(g.test)) for g in guards)
    )
