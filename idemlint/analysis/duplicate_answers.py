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
from idemlint.analysis.retry.exits import always_leaves, always_raises
from idemlint.analysis.syntax import caught_classes
from idemlint.knowledge.http import (
    CREATE_WORDS,
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
    """The call is the one act in the body of a `try` (in its own function) one of whose
    handlers takes the server's duplicate answer as success. A call that builds the receiver of
    another (`Client(...)` of `Client(...).add_user(...)`) is judged as that one."""
    call = _act_of(model, call)
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


def absorbed_through(model: ModuleModel, call: cst.Call, callee: str) -> bool:
    """A call of a function of the project whose duplicate answer is absorbed, where the
    function is named for making one thing (`add_user`): a helper that also does other work
    (`onboard()`) may send a second write the answer does not speak for. A call that builds the
    receiver of such a call (`Client(...)` of `Client(...).add_user(...)`) is part of that act."""
    act = _act_of(model, call)
    if act is not call and isinstance(act.func, cst.Attribute):
        callee = act.func.attr.value  # `Client(...).add_user(...)`: the act is `add_user`
    words = words_of(callee.rsplit(".", 1)[-1])
    return bool(set(words) & CREATE_WORDS) and duplicate_answer_absorbed(model, call)


def _act_of(model: ModuleModel, call: cst.Call) -> cst.Call:
    """The outermost call whose receiver the call builds (`Client(...).add_user(...)`), or itself."""
    act = call
    for outer in model.ancestors(call):
        if isinstance(outer, cst.Call) and model.is_inside(act, outer.func):
            act = outer
        elif not isinstance(outer, (cst.Attribute, cst.Call)):
            break
    return act


def _alone_in(model: ModuleModel, call: cst.Call, block: cst.Try | cst.TryStar) -> bool:
    """Every other call in the `try` body, nested blocks and arguments included, changes nothing
    outside the process (`quiet_call`: logging, builtins, getters); what builds the call's
    receiver (`Client(...).create(...)`) is part of it."""
    own = set(model.iter_nodes(call.func))
    return all(
        node is call or node in own or not isinstance(node, cst.Call) or quiet_call(model, node)
        for node in model.iter_nodes(block.body)
    )


def _absorbs(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """The handler catches a duplicate answer by its class and does not raise, or tests for one
    and goes on where it is one (`if e.status == 409: return`, `if "exists" not in msg: raise`).
    Where the branch does not leave, the duplicate's path runs on past the `if`."""
    statements = list(handler.body.body)
    if any(_class_names_a_duplicate(c) for c in caught_classes(handler.type)) and not always_raises(statements):
        return True
    caught = handler.name.name.value if handler.name is not None and isinstance(handler.name.name, cst.Name) else None
    for index, statement in enumerate(statements):
        if not isinstance(statement, cst.If) or caught is None or not _reads(statement.test, caught):
            continue  # `if os.path.exists(lock):` asks nothing of the answer
        where_duplicate = _polarity(statement.test)
        if where_duplicate is None:
            continue
        if where_duplicate:
            branch = list(statement.body.body)
        elif statement.orelse is not None:
            other = statement.orelse
            branch = [other] if isinstance(other, cst.If) else list(other.body.body)
        else:
            branch = []
        if branch and isinstance(_last(branch), cst.Continue):
            continue  # `if status == 409: sleep(); continue`: it goes round, it does not take it as done
        rest = statements[index + 1 :]
        leaves = always_leaves(branch, or_continues=True) or isinstance(_last(branch), (cst.Return, cst.Break))
        duplicate_path = branch if leaves else [*branch, *rest]
        if not always_raises(duplicate_path):
            return True
    return False


def _last(block: Sequence[cst.CSTNode]) -> cst.CSTNode | None:
    """A block's last statement: of a line's statements, the last (`log(); continue`)."""
    if not block:
        return None
    last = block[-1]
    return last.body[-1] if isinstance(last, cst.SimpleStatementLine) and last.body else last


def _reads(test: cst.BaseExpression, name: str) -> bool:
    """The test reads the caught error (`e.response.status_code`, `str(e)`)."""
    pending: list[cst.CSTNode] = [test]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Name) and node.value == name:
            return True
        pending.extend(node.children)
    return False


def _polarity(test: cst.BaseExpression) -> bool | None:
    """Whether a test holds where the answer is a duplicate (True: `status == 409`, `"already"
    in msg`, `is_conflict(e)`), where it is not (False: `not in`, `!=`), or does not ask (None).
    A comparison asks only where an operand is the mark itself: `msg.find("exists") != -1`
    does not say which way it goes."""
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        inner = _polarity(test.expression)
        return None if inner is None else not inner
    if isinstance(test, cst.BooleanOperation):
        left = _polarity(test.left)
        return left if left is not None else _polarity(test.right)
    if isinstance(test, cst.Comparison):
        if len(test.comparisons) != 1:
            return None
        operator, other = test.comparisons[0].operator, test.comparisons[0].comparator
        if isinstance(operator, (cst.In, cst.NotIn)):
            asks = (
                _is_mark(test.left)
                or isinstance(other, (cst.Tuple, cst.List, cst.Set))
                and any(_is_mark(e.value) for e in other.elements)
            )
        elif isinstance(operator, (cst.Equal, cst.NotEqual, cst.Is, cst.IsNot)):
            asks = _is_mark(test.left) or _is_mark(other)
        else:
            return None
        return None if not asks else not isinstance(operator, (cst.NotIn, cst.NotEqual, cst.IsNot))
    if isinstance(test, cst.Call):
        return True if _is_mark(test.func) else None  # `is_conflict(e)`
    return None


def _is_mark(node: cst.BaseExpression) -> bool:
    """409, a name or attribute that says it (`CONFLICT`, `HTTPStatus.CONFLICT`), or text that does."""
    if isinstance(node, cst.Integer):
        return node.value == str(DUPLICATE_ANSWER_STATUS)
    if isinstance(node, cst.SimpleString):
        return _says_duplicate(node.value)
    if isinstance(node, cst.Name):
        return _says_duplicate(node.value)
    if isinstance(node, cst.Attribute):
        return _says_duplicate(node.attr.value)
    return False


def _class_names_a_duplicate(caught: cst.BaseExpression) -> bool:
    """The class's own name says it (`AlreadyExists`), not its module's (`conflicts.Timeout`)."""
    if isinstance(caught, cst.Attribute):
        return _says_duplicate(caught.attr.value)
    return isinstance(caught, cst.Name) and _says_duplicate(caught.value)


def _says_duplicate(text: str) -> bool:
    """ "already exists", `ResourceExistsError`, `CONFLICT`; not "does not exist" or
    `NoConflictDetected`."""
    words = set(words_of(text))
    return bool(words & (DUPLICATE_ANSWER_WORDS | EXISTS_WORDS)) and not words & MISSING_WORDS
