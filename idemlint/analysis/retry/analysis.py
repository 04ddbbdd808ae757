"""The retry contexts of one file, and which of them re-runs a given node."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.retry.callables import CallableRetries
from idemlint.analysis.retry.context import RetryContext
from idemlint.analysis.retry.exits import in_loop_body, runs_once_per_loop
from idemlint.analysis.retry.functions import (
    InheritedSettings,
    classify_function,
    enqueued_with_retry,
)
from idemlint.analysis.retry.loops import classify_loop
from idemlint.analysis.retry.recursive_calls import recursive_retry

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


class RetryAnalysis:
    def __init__(self, model: ModuleModel, inherited: InheritedSettings | None = None) -> None:
        self.model = model
        self.contexts: list[RetryContext] = []
        self._by_node: dict[cst.CSTNode, RetryContext] = {}
        for function in model.functions:
            context = classify_function(model, function, inherited)
            if context is not None:
                self._add(context)
        for function in model.functions:
            if function not in self._by_node:
                recursive = recursive_retry(model, function)
                if recursive is not None:
                    self._add(recursive)
        for context in enqueued_with_retry(model):
            if context.node not in self._by_node:
                self._add(context)
        for loop in model.loops:
            context = classify_loop(model, loop)
            if context is not None:
                self._add(context)
        # `with_retries(lambda: ...)`: after the loops, which make a helper of this module one
        at_position = inherited.retries_task_at if inherited is not None else None
        self.callables = CallableRetries(model, self.context_of, at_position)
        for context in self.callables.contexts():
            if context.node not in self._by_node:
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
                if context.kind in ("loop", "iterator") and not in_loop_body(self.model, node, ancestor):
                    continue
                if (
                    context.kind == "loop"
                    and isinstance(ancestor, (cst.For, cst.While))
                    and runs_once_per_loop(self.model, node, ancestor)
                ):
                    continue  # on the way out (`if attempt == last: report(); raise`): once, not per attempt
                return context
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return None
        return None

    def repeating_context_of(self, node: cst.CSTNode) -> RetryContext | None:
        """The retry context that may do `node`'s work twice: none where every repeat follows
        an attempt the server turned away (a 429-only loop), nor where `node` is the retried
        function's last act and its failures end in a handler (`last_acts.py`)."""
        from idemlint.analysis.retry.last_acts import ends_the_attempt  # it reads the database analysis's helpers

        context = self.context_of(node)
        if context is None or context.repeats_safely or ends_the_attempt(self.model, node, context):
            return None
        return context

    def reruns_the_function(self, node: cst.CSTNode) -> bool:
        """A task or decorator retry runs the whole function around `node` again, after it may
        have moved on (a loop inside it goes round within the one run)."""
        context = self.context_of(node)
        return context is not None and context.kind not in ("loop", "iterator")

    def called_parameter(self, function: cst.FunctionDef) -> int | None:
        """The position of the parameter `function` calls once per attempt (`def retry(fn):
        for ...: try: return fn()`), for the project index."""
        return self.callables.called_parameter(function)

    def context_for_loop(self, loop: cst.CSTNode) -> RetryContext | None:
        return self._by_node.get(loop)
