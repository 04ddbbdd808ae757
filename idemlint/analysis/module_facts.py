"""The project map's view of one module: its function summaries as plain data.

`analysis/project.py` calls `module_facts` for every production module worth summarising
(one that imports an HTTP or SDK library or makes random values), then follows the calls
between modules. Nothing here holds a CST node: the facts cross to worker processes and
are stored in the project index's cache as plain data.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.calls import call_target, is_class_name, tail_name
from idemlint.analysis.summaries import Chain, Passed, Step, Summary
from idemlint.analysis.summary_records import CHAIN_FACTS

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.retry import RetryAnalysis
    from idemlint.context import FileContext
else:
    cst = LazyModule("libcst", globals(), "cst")


# a call to a function elsewhere: (caller, its line, target, the call's line, what it passes,
# always, returned, sent, retried, status errors leave, duplicates absorbed; see summaries._Edge)
Edge = tuple[str, int, str, int, Passed, bool, bool, bool, bool, bool, bool]


@dataclass(frozen=True)
class ModuleFacts:
    """What the project index keeps of one module: picklable, no CST nodes."""

    path: str  # root-relative
    functions: tuple[tuple[str, Summary, int], ...]  # (dotted name, summary, line of the def)
    # the calls to functions elsewhere (see Edge)
    edges: tuple[Edge, ...]
    classes: tuple[tuple[str, tuple[str, ...], frozenset[str]], ...]  # (dotted name, bases, methods)
    instances: tuple[tuple[str, str], ...] = ()  # module-level `psp = PspClient()`: (dotted name, class)
    # Celery Task classes and the retry settings their bodies declare (`autoretry_for = ...`)
    task_settings: tuple[tuple[str, frozenset[str]], ...] = ()
    # functions that run again what they are handed: a Celery task whose `.retry()` they call,
    # or a callable they call once per attempt (`def with_retries(fn)`): (dotted name, its position)
    task_retriers: tuple[tuple[str, int], ...] = ()
    # retry decorators bound to a module-level name for other modules to apply (`api_retry =
    # tenacity.retry(...)`): (dotted name, the decorator's qualified name)
    retry_decorators: tuple[tuple[str, str], ...] = ()


def module_facts(ctx: FileContext) -> ModuleFacts | None:
    """Summarise one parsed module's functions for the project index (from the same
    `FileContext` a check reads: one composition root); None when it holds nothing a caller
    inherits. The context's path is root-relative and it has no project index: the index is
    what this builds."""
    from idemlint.analysis.calls import class_bases
    from idemlint.analysis.retry import class_settings
    from idemlint.analysis.retry.functions import named_retry_decorators

    model, retry, module, path, source = ctx.model, ctx.retry, ctx.module_name, ctx.path, ctx.source
    local = ctx.summaries
    names = {f: _dotted(model, f, module) for f in model.functions}
    retried = {c.node for c in retry.contexts}
    edges = {f: e for f, e in local.edges.items() if e and names[f] and f not in retried}
    facts = {f: s for f, s in local.by_function.items() if names[f] and (not s.empty or f in edges)}
    task_retriers = tuple(
        (names[f], position)
        for f in model.functions
        if names[f] and (position := _rerun_parameter(model, retry, f)) is not None
    )
    decorators = tuple((f"{module}.{name}", qualname) for name, _call, qualname in named_retry_decorators(model))
    if not facts and not edges and not model.classes and not task_retriers and not decorators:
        return None
    lines = _lines_by_ast(model, source)
    if lines is None:  # the two parsers disagree on the calls: ask libcst (slower, exact)
        from idemlint.parsing import positions

        lines = {node: span[0] for node, span in positions(ctx.module).items()}

    def line(node: cst.CSTNode) -> int:
        return lines.get(node, 0)

    def plain(chain: Chain | None) -> Chain | None:
        if chain is None:
            return None
        return tuple(Step(s.text, None, path, line(s.node)) if s.node is not None else s for s in chain)

    functions = tuple(
        (
            names[f],
            replace(s, **{fact: plain(getattr(s, fact)) for fact in CHAIN_FACTS}),  # type: ignore[arg-type]
            line(f.name),
        )
        for f, s in facts.items()
    )
    plain_edges = tuple(
        (
            names[f],
            line(f.name),
            e.target,
            line(e.call),
            e.passed,
            e.always,
            e.returned,
            e.sent,
            e.retried,
            e.status_errors_leave,
            e.duplicates_absorbed,
        )
        for f, found in edges.items()
        for e in found
    )
    classes = tuple(
        (
            f"{module}.{c.name.value}",
            class_bases(model, c, module),
            frozenset(s.name.value for s in c.body.body if isinstance(s, cst.FunctionDef)),
        )
        for c in model.classes
        if model.scope_of(c) is model.module
    )
    instances = tuple(
        (f"{module}.{name}", kind)
        for name, bindings in model.bindings.get(model.module, {}).items()
        if len(bindings) == 1
        and isinstance(bindings[0].value, cst.Call)
        and (kind := call_target(model, bindings[0].value, module)) is not None
        and is_class_name(kind)
    )
    task_settings = tuple(
        (f"{module}.{c.name.value}", frozenset(settings))
        for c in model.classes
        if model.scope_of(c) is model.module and (settings := class_settings(c))
    )
    inherited = _sdk_methods(classes, source, path)
    return ModuleFacts(
        path, functions + inherited, plain_edges, classes, instances, task_settings, task_retriers, decorators
    )


def _rerun_parameter(model: ModuleModel, retry: RetryAnalysis, function: cst.FunctionDef) -> int | None:
    """The position of the parameter a function runs again: a Celery task whose `.retry()` it
    calls, else a callable it calls once per attempt. The caller's argument tells them apart
    (a task hands over itself, other code a lambda or a function: `analysis/retry/callables`)."""
    from idemlint.analysis.retry import retried_parameter

    position = retried_parameter(model, function)
    return position if position is not None else retry.called_parameter(function)


def _sdk_methods(
    classes: tuple[tuple[str, tuple[str, ...], frozenset[str]], ...], source: str, path: str
) -> tuple[tuple[str, Summary, int], ...]:
    """A project class that extends an SDK client (`class BrazeApiClient(BrazeClient)`) inherits
    the client's side-effecting methods: each SDK verb it does not define itself is summarised
    as calling the SDK without an idempotency key, so `BrazeApiClient().send_campaign_message()`
    is an effect wherever it is called."""
    from idemlint.knowledge.sdks import SDK_CLIENTS, SDK_VERBS

    found: list[tuple[str, Summary, int]] = []
    for name, bases, methods in classes:
        client = next((base for base in bases if base in SDK_CLIENTS), None)
        if client is None:
            continue
        short = name.rsplit(".", 1)[-1]
        header = re.search(rf"^[ \t]*class[ \t]+{re.escape(short)}\b", source, re.MULTILINE)
        line = source.count("\n", 0, header.start()) + 1 if header else 0
        for verb in sorted(SDK_VERBS - methods):
            chain = (Step(f"{client.rsplit('.', 1)[-1]}.{verb}()", None, path, line),)
            summary = Summary(unkeyed_effect=chain, effect=chain, effect_operation=f"{SDK_CLIENTS[client]}.{verb}")
            found.append((f"{name}.{verb}", summary, line))
    return tuple(found)


def _lines_by_ast(model: ModuleModel, source: str) -> dict[cst.CSTNode, int] | None:
    """Lines of the module's calls, assignments and function names, from the standard library's parser
    (libcst's position metadata costs twice the parse): both parsers see the same nodes
    in the same source order, which is checked kind by kind and name by name; None if they differ."""
    import ast

    from idemlint.analysis.syntax import stdlib_tree

    try:
        tree = stdlib_tree(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    ast_nodes = [
        n for n in ast.walk(tree) if isinstance(n, (ast.Call, ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign))
    ]
    ast_nodes.sort(key=_source_order)
    cst_nodes = [n for n in _in_source_order(model) if isinstance(n, (cst.Call, cst.FunctionDef, cst.Assign))]
    if len(ast_nodes) != len(cst_nodes):
        return None
    lines: dict[cst.CSTNode, int] = {}
    for ours, theirs in zip(cst_nodes, ast_nodes, strict=True):
        if isinstance(ours, cst.FunctionDef):
            if not isinstance(theirs, (ast.FunctionDef, ast.AsyncFunctionDef)) or theirs.name != ours.name.value:
                return None
            lines[ours.name] = theirs.lineno
        elif isinstance(ours, cst.Assign) or isinstance(theirs, ast.Assign):
            if not (isinstance(ours, cst.Assign) and isinstance(theirs, ast.Assign)):
                return None
            lines[ours] = theirs.lineno
        elif not isinstance(theirs, ast.Call) or tail_name(ours.func) != _ast_tail(theirs.func):
            return None
        else:
            lines[ours] = theirs.lineno
    return lines


def _in_source_order(model: ModuleModel) -> Iterator[cst.CSTNode]:
    """Every node, outer before inner, in the order the source shows them. libcst keeps some
    fields out of that order (a function's decorators after its body, a conditional
    expression's test before its value), so those nodes' children are put back in order."""
    stack: list[cst.CSTNode] = [model.module]
    while stack:
        node = stack.pop()
        yield node
        children = list(model.children_of(node))
        first: tuple[cst.CSTNode | None, ...] = ()
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            first = tuple(node.decorators)
            if isinstance(node, cst.ClassDef):
                first += tuple(node.bases) + tuple(node.keywords)
            else:
                first += (node.name, node.params, node.returns)
        elif isinstance(node, cst.IfExp):
            first = (node.body,)
        elif isinstance(node, cst.ExceptHandler):
            first = (node.type, node.name)
        if first:
            early = [c for c in first if c is not None and any(c is child for child in children)]
            children = early + [c for c in children if not any(c is e for e in early)]
        stack.extend(reversed(children))


def _source_order(node: object) -> tuple[int, int, int, int]:
    """Where a node starts (a decorated function at its first decorator's `@`), outer nodes
    before the nodes they hold."""
    import ast

    assert isinstance(node, (ast.Call, ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign))
    line, col = node.lineno, node.col_offset
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.decorator_list:
        line, col = node.decorator_list[0].lineno, node.decorator_list[0].col_offset - 1
    return line, col, -(node.end_lineno or 0), -(node.end_col_offset or 0)


def _ast_tail(func: object) -> str:
    import ast

    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _dotted(model: ModuleModel, function: cst.FunctionDef, module: str) -> str:
    """`module.function` or `module.Class.method`; "" for nested functions (not callable by name)."""
    path = [function.name.value]
    for ancestor in model.ancestors(function):
        if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
            return ""
        if isinstance(ancestor, cst.ClassDef):
            path.insert(0, ancestor.name.value)
    return ".".join([module, *path]) if len(path) <= 2 else ""
