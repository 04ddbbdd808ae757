"""Where a write's "it exists already" answer is taken as success (create-if-absent).

A server that refuses to make a thing twice answers the second create with an error: 409
Conflict, an `AlreadyExists` error, "already exists" in the message. Code that catches that
answer and goes on (`except Conflict: pass`, `if "already exists" not in str(e): raise`)
treats the create as done, so a retry that lands twice is refused the second time and the
refusal absorbed: the write is safe to repeat. Only a `try` that holds no other act counts:
the answer says nothing of another write's duplicate (`try: create(); notify()`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.side_effects import quiet_call
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.http import (
    DUPLICATE_ANSWER_STATUS,
    DUPLICATE_ANSWER_WORDS,
    EXISTS_WORDS,
    MISSING_WORDS,
)
from idemlint.knowledge.repeats import words_of

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def duplicate_answer_absorbed(model: ModuleModel, call: cst.Call) -> bool:
    """The call sits alone in the body of a `try` (in its own function) one of whose handlers
    takes the server's duplicate answer as success."""
    function = model.enclosing_function(call)
    for ancestor in model.ancestors(call):
        if ancestor is function:
            return False
        if (
            isinstance(ancestor, (cst.Try, cst.TryStar))
            and model.is_inside(call, ancestor.body)
            and _alone_in(model, call, ancestor)
            and any(_absorbs(handler) for handler in ancestor.handlers)
        ):
            return True
    return False


def _alone_in(model: ModuleModel, call: cst.Call, block: cst.Try | cst.TryStar) -> bool:
    """Every other statement of the `try` body makes only quiet calls (logging, builtins)."""
    for statement in block.body.body:
        if model.is_inside(call, statement):
            continue
        if any(isinstance(n, cst.Call) and not quiet_call(model, n) for n in model.iter_nodes(statement)):
            return False
    return True


def _absorbs(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """The handler catches a duplicate answer by its class and does not raise, or tests for one
    and goes on where it is one (`if e.status == 409: return`, `if "exists" not in msg: raise`)."""
    statements = list(handler.body.body)
    if any(_names_a_duplicate(c) for c in caught_classes(handler.type)) and not _always_raises(statements):
        return True
    for index, statement in enumerate(statements):
        if not isinstance(statement, cst.If):
            continue
        where_duplicate = _polarity(statement.test)
        if where_duplicate is None:
            continue
        if where_duplicate:
            duplicate_path = list(statement.body.body)
        elif statement.orelse is not None:
            other = statement.orelse
            duplicate_path = [other] if isinstance(other, cst.If) else list(other.body.body)
        else:
            duplicate_path = statements[index + 1 :]
        if not _always_raises(duplicate_path):
            return True
    return False


def _polarity(test: cst.BaseExpression) -> bool | None:
    """Whether a test holds where the answer is a duplicate (True: `status == 409`, `"already"
    in msg`), where it is not (False: `not in`, `!=`), or does not ask (None)."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _polarity(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left = _polarity(test.left)
        return left if left is not None else _polarity(test.right)
    if isinstance(test, cst.Comparison):
        if not any(_names_a_duplicate(part) for part in (test.left, *(t.comparator for t in test.comparisons))):
            return None
        operator = test.comparisons[0].operator
        return not isinstance(operator, (cst.NotIn, cst.NotEqual, cst.IsNot))
    return True if _names_a_duplicate(test) else None


def _names_a_duplicate(node: cst.CSTNode) -> bool:
    """A part of an expression names the duplicate answer: 409, `CONFLICT`, `AlreadyExists`,
    "already exists"; not "does not exist"."""
    pending = [node]
    while pending:
        current = pending.pop()
        text = None
        if isinstance(current, cst.Integer):
            if current.value == str(DUPLICATE_ANSWER_STATUS):
                return True
        elif isinstance(current, cst.SimpleString):
            text = current.value
        elif isinstance(current, cst.Name):
            text = current.value
        elif isinstance(current, cst.Attribute):
            text = current.attr.value
        if text is not None:
            words = set(words_of(text))
            if words & DUPLICATE_ANSWER_WORDS or words & EXISTS_WORDS and not words & MISSING_WORDS:
                return True
        pending.extend(current.children)
    return False


def _always_raises(statements: Sequence[cst.CSTNode]) -> bool:
    """The block ends by raising on every path (`raise`, or an `if`/`else` that both raise)."""
    if not statements:
        return False
    last = statements[-1]
    if isinstance(last, cst.SimpleStatementLine):
        return any(isinstance(s, cst.Raise) for s in last.body)
    if isinstance(last, cst.If) and last.orelse is not None:
        other = last.orelse
        other_body = [other] if isinstance(other, cst.If) else list(other.body.body)
        return _always_raises(list(last.body.body)) and _always_raises(other_body)
    return False
