"""A retried function's last act: a request whose own failure ends in a handler that swallows
every exception, with nothing after it that may fail the run.

`try: client.post(webhook, ...) except Exception: log.error(...)` as the last thing a task
does: if the post fails (a timeout after the server acted included), the handler ends the
failure and the task returns; if it succeeds, nothing after it can fail. So no retry of the
task follows a post that was made, and the post is never sent twice by it. Only a retry that
runs the whole function again is judged so (a task, a decorator, a recursive call); a loop's
body goes round within one run, where the next attempt may follow the act (so is an act inside a
loop of the function, and one whose `try` has an `else:` or `finally:` that may fail). What counts as
failing is any call but a log line (`print` too) or `str`, `repr`, `len`, and any `raise`: a save
or a getter may fail as well as a request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.side_effects import nodes_after
from idemlint.analysis.policy.common import handler_catches_all
from idemlint.analysis.timeouts import LOGGING_CALL

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.retry.context import RetryContext
else:
    cst = LazyModule("libcst", globals(), "cst")


def ends_the_attempt(model: ModuleModel, node: cst.CSTNode, context: RetryContext) -> bool:
    """Whether `node` is the retried function's last act, its failures swallowed (above)."""
    if context.kind in ("loop", "iterator") or not isinstance(context.node, cst.FunctionDef):
        return False
    statement = model.statement_of(node)
    guard = next(
        (a for a in model.ancestors(statement) if isinstance(a, cst.Try) and model.is_inside(statement, a.body)), None
    )
    if guard is None or not model.is_inside(guard, context.node.body):
        return False
    if any(isinstance(a, (cst.For, cst.While)) for a in model.ancestors(guard, until=context.node)):
        return False  # the act runs again in the same run, after work that may fail
    if not any(_swallows_everything(model, handler) for handler in guard.handlers):
        return False
    if any(_may_fail(model, n) for part in (guard.orelse, guard.finalbody) if part for n in model.iter_nodes(part)):
        return False  # its `else:` or `finally:` runs after the act and may fail the run
    return not any(
        _may_fail(model, n) and not _caught_quietly(model, n, context.node) for n in nodes_after(model, guard)
    )


def _swallows_everything(model: ModuleModel, handler: cst.ExceptHandler) -> bool:
    """`except Exception: log.error(...)`: every failure caught, and none raised again or handed on."""
    return handler_catches_all(model, handler) and not any(_may_fail(model, n) for n in model.iter_nodes(handler.body))


def _caught_quietly(model: ModuleModel, node: cst.CSTNode, function: cst.FunctionDef) -> bool:
    """`try: cleanup(paths) except Exception: log(...)`: a failure there ends in the handler."""
    return any(
        isinstance(a, cst.Try)
        and model.is_inside(node, a.body)
        and any(_swallows_everything(model, h) for h in a.handlers)
        for a in model.ancestors(node, until=function)
    )


def _may_fail(model: ModuleModel, node: cst.CSTNode) -> bool:
    if isinstance(node, cst.Raise):
        return True
    if not isinstance(node, cst.Call):
        return False
    name = model.dotted(node.func) or ""  # as written: `log.error`, not `<local>.log.error`
    return not (LOGGING_CALL.search(name) or name in _CANNOT_FAIL)


_CANNOT_FAIL = frozenset({"str", "repr", "len"})  # `print` is a log line (LOGGING_CALL)
