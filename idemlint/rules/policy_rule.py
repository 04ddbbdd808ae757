"""The base of the retry-policy rules: each picks verdicts from the file's `Policy` records and
words them through its `messages` table, keyed by (kind, source)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

from idemlint.analysis.policy import Policy, Verdict
from idemlint.analysis.summaries import chain_origin, related_steps, via
from idemlint.knowledge.http import status_error_raiser
from idemlint.knowledge.retries import CELERY_CALL, HUEY, RECURSION, TASK_DECORATORS
from idemlint.rule import Report, Rule

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.context import FileContext
else:
    from idemlint._lazy import LazyModule

    cst = LazyModule("libcst", globals(), "cst")


# how IDM202 found a task's retries do less harm (its confidence is measured apart)
PERIODIC_ONLY = "a task only a periodic schedule starts"


class PolicyRule(Rule):
    """A rule that reports some kinds of verdict from every retry policy in the file."""

    needs_project = True  # helpers in other modules: a wait (`sleep_ms(500)`), a judge, a status error let out
    # (kind, source) -> message; fields: {label} the retry context's name, {codes} the HTTP statuses,
    # {caught} " (the class caught)", {raiser} what raises that status error, {methods} the methods
    # retried, {owner} whose .retry() is called
    messages: ClassVar[dict[tuple[str, str], str]]
    # the harm is many runs retrying in step (IDM202): less where one run starts per tick
    herd_harm: ClassVar[bool] = False

    def verdicts(self, policy: Policy) -> list[Verdict]:
        raise NotImplementedError

    def message(self, verdict: Verdict, origin: str = "") -> str:
        return self.messages[verdict.kind, verdict.source].format(
            label=verdict.label,
            codes=", ".join(str(s) for s in verdict.statuses),
            caught=f" ({verdict.caught})" if verdict.caught else "",
            raiser=status_error_raiser(verdict.caught),
            methods=", ".join(verdict.methods) or "every method",
            owner=verdict.owner,
            origin=origin,
            via=via(verdict.chain) if verdict.chain else "",
            setting=verdict.setting,
        )

    # kinds of verdict too new to have been judged on real code: their own evidence, so the
    # calibration table measures them apart, and `medium` until it has (not the rule's measure)
    new_kinds: ClassVar[dict[tuple[str, str], str]] = {
        ("no-wait", "loop"): "a retry loop with no wait",
        ("status-error-class", CELERY_CALL): "a Celery task handler that retries a status error",
        ("no-wait", RECURSION): "a retry loop with no wait",
        ("every-failure-status", "loop"): "a retry loop that leaves only on a success",
        ("no-bound", RECURSION): "a recursive retry that counts no attempts",
        ("default-wait", CELERY_CALL): "a Celery retry() that waits the task's default delay",
        ("default-wait-shaped", CELERY_CALL): "a Celery retry() that waits the task's default delay",
        ("catch-all", HUEY): "a Huey task's retries",
        ("fixed-wait", HUEY): "a Huey task's retries",
    }

    def check(self, ctx: FileContext) -> Iterator[Report]:
        if ctx.program_run_by_hand:
            # a program a person runs (a script, a management command, a `__main__`) is one client someone
            # watches: no herd, no fleet, no endless loop nobody sees. Its repeats are IDM001's and IDM301's.
            return
        for policy in ctx.policies.policies:
            for verdict in self.verdicts(policy):
                origin, lines = chain_origin(verdict.chain, "origin") if verdict.chain else ("", ())
                message = self.message(verdict, origin)
                if "$context" in message:
                    lines = (*lines, ("context", policy.anchor))
                lines = (*lines, *verdict.lines)
                related = related_steps(verdict.callee, verdict.chain) if verdict.callee and verdict.chain else ()
                unmeasured = self.new_kinds.get((verdict.kind, verdict.source))
                lowered = self.less_harm(ctx, policy, verdict)
                yield Report(
                    verdict.node,
                    message,
                    fix=verdict.fix,
                    lines=lines,
                    related=related,
                    evidence=lowered or unmeasured,
                    confidence="low" if lowered else "medium" if unmeasured else None,
                )

    def less_harm(self, ctx: FileContext, policy: Policy, verdict: Verdict) -> str | None:
        """Why this verdict does less harm than the rule's usual one (its evidence, reported at
        `low`), or None: where the harm is a herd (`herd_harm`), a task only a periodic schedule
        starts (`analysis/schedules.py`) runs once per tick, with no cohort of runs to spread."""
        if not self.herd_harm:
            return None
        task = policy.context.node if policy.context is not None else ctx.model.enclosing_function(verdict.node)
        if not isinstance(task, cst.FunctionDef) or task.name.value not in ctx.project.periodic_only_tasks:
            return None
        called = (d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator for d in task.decorators)
        names = {(ctx.model.qualname(c) or "").rsplit(".", 1)[-1] for c in called}
        return PERIODIC_ONLY if names & (TASK_DECORATORS | {"periodic_task"}) else None
