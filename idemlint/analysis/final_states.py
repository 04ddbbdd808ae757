"""The final states a project's own guards imply, where it declares no state machine.

A project that never writes its lifecycle down still shows it in the tests it makes before
it writes a state:
- a guard that gives up on a state (`if mail.state in (SENT, SENDING): return`,
  `if export.status == "completed": continue`) says a record in that state is done;
- a guarded move (`if order.status == PAID: order.status = REFUNDED`, `if job.status !=
  QUEUED: raise ...` then `job.status = RUNNING`, `.filter(status=PENDING).update(status=
  EXPIRED)`) says a record leaves the state it tests.
A state some guard gives up on and no guarded move leaves is final. IDM103 reads them: a
write of a project's one final state with no precondition moves no record backward (a record
in it stays; any other moves on to it), while a write of one of several final states may
overwrite another (SENT with FAILED), and stays reported.

Facts come from stdlib `ast`, only for files whose bytes show a state test. Machines are
named as `machines.py` names them: by the enum or class that holds the state (`Status` for
`Status.SENT`, `Export` for `Export.COMPLETED`), or, for states written as strings, by the
column (`column:status`).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from idemlint.analysis.machines import dotted_name, elements
from idemlint.knowledge.states import STATE_COLUMNS

# (states some guard moves a record out of, states some guard gives up on), per machine
Evidence = dict[str, tuple[frozenset[str], frozenset[str]]]

_WORDS = "|".join(sorted(STATE_COLUMNS))
# `.status ==`, `.order_state in`, `status=` / `state__in=` in a filter: a state test
_STATE_TEST = re.compile(
    rb"\.(?:\w+_)?(?:"
    + _WORDS.encode()
    + rb")\s*(?:==|!=|in\b|not\s+in\b)|\b(?:"
    + _WORDS.encode()
    + rb")(?:__in)?\s*="
)


def state_evidence(source: bytes, path: str = "") -> Evidence:
    """What one file's guards say of each machine's states; {} for most files."""
    if not _STATE_TEST.search(source):
        return {}
    try:
        tree = ast.parse(source, path or "<unknown>")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    left: dict[str, set[str]] = {}
    refused: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            _read_block(node.body, left, refused)
        elif isinstance(node, ast.Call):
            for machine, states in _filtered_update(node):
                left.setdefault(machine, set()).update(states)
    return {
        name: (frozenset(left.get(name, ())), frozenset(refused.get(name, ())))
        for name in sorted(set(left) | set(refused))
    }


def join_evidence(files: Iterable[Evidence]) -> dict[str, frozenset[str]]:
    """The final states of each machine, from every file's evidence: given up on somewhere,
    left by no guarded move anywhere. Machines with none are not listed."""
    left: dict[str, set[str]] = {}
    refused: dict[str, set[str]] = {}
    for evidence in files:
        for name, (moved_from, given_up) in evidence.items():
            left.setdefault(name, set()).update(moved_from)
            refused.setdefault(name, set()).update(given_up)
    finals = {name: frozenset(refused[name] - left.get(name, set())) for name in sorted(refused)}
    return {name: states for name, states in finals.items() if states}


def is_sole_final(
    finals: Mapping[str, frozenset[str]], column: str, kind: str, text: str, imports: Mapping[str, str]
) -> bool:
    """Whether a written state (`kind`/`text` as IDM103 reads a write's value) is its
    machine's one final state."""
    named = _written(column, kind, text, imports)
    return named is not None and finals.get(named[0]) == frozenset({named[1]})


def describe_finals(finals: Mapping[str, frozenset[str]]) -> list[str]:
    """The implied final states as `idemlint states` prints them."""
    if not finals:
        return []
    lines = ["Final states implied by the project's guards (given up on, never left by a guarded move):"]
    for name, states in finals.items():
        title = f"the {name.removeprefix('column:')} column" if name.startswith("column:") else name
        alone = "; IDM103 does not report a write of it with no precondition" if len(states) == 1 else ""
        lines.append(f"  {title}: {', '.join(sorted(states))}{alone}")
    return lines


def _written(column: str, kind: str, text: str, imports: Mapping[str, str]) -> tuple[str, str] | None:
    if kind == "literal":
        return f"column:{column.lower()}", text
    parts = text.split(".")
    if kind != "constant" or len(parts) < 2:
        return None
    owner = parts[-2]
    if len(parts) == 2 and parts[0] in imports:
        owner = imports[parts[0]].rsplit(".", 1)[-1]  # `from .states import Status as S`: `S.PAID`
    return owner, parts[-1]


def _read_block(body: list[ast.stmt], left: dict[str, set[str]], refused: dict[str, set[str]]) -> None:
    """The guards of one block, and of the blocks inside it."""
    for at, statement in enumerate(body):
        if isinstance(statement, ast.If):
            tested = _state_test(statement.test)
            if tested is not None:
                record, column, positive, machine, states = tested
                if positive and _leaves(statement.body):
                    refused.setdefault(machine, set()).update(states)  # `if x.state == DONE: return`
                elif positive:  # `if x.state == PAID: x.state = REFUNDED`
                    _moves(statement.body, record, column, machine, states, left)
                elif _leaves(statement.body):  # `if x.state != QUEUED: raise`, then `x.state = RUNNING`
                    _moves(body[at + 1 :], record, column, machine, states, left)
        for inner in _blocks(statement):
            _read_block(inner, left, refused)


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []  # read on its own
    blocks = [getattr(statement, name) for name in ("body", "orelse", "finalbody") if hasattr(statement, name)]
    blocks += [handler.body for handler in getattr(statement, "handlers", ())]
    blocks += [case.body for case in getattr(statement, "cases", ())]
    return [b for b in blocks if isinstance(b, list)]


def _state_test(test: ast.expr) -> tuple[str, str, bool, str, frozenset[str]] | None:
    """`x.status == S`, `x.status in (A, B)`, `!=`/`not in`: (the record, the column, whether
    it tests for the states, the machine, the states). Also one side of an `and` testing for
    them, or of an `or` testing against them: what holds in the body, or past a body that leaves."""
    if isinstance(test, ast.BoolOp):
        found = [t for t in (_state_test(v) for v in test.values) if t is not None]
        return found[0] if len(found) == 1 and found[0][2] == isinstance(test.op, ast.And) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Attribute)):
        return None
    record, column = dotted_name(test.left.value), test.left.attr
    if record is None or not _is_state_column(column):
        return None
    op, right = test.ops[0], test.comparators[0]
    values = [right] if isinstance(op, (ast.Eq, ast.NotEq)) else elements(right)
    if values is None or not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
        return None
    named = [_state(value, column) for value in values]
    machines = {n[0] for n in named if n is not None}
    if not named or None in named or len(machines) != 1:
        return None
    return record, column, isinstance(op, (ast.Eq, ast.In)), machines.pop(), frozenset(n[1] for n in named if n)


def _moves(
    body: list[ast.stmt], record: str, column: str, machine: str, sources: frozenset[str], left: dict[str, set[str]]
) -> None:
    """Sources a block moves the tested record out of: it writes the column another state."""
    for statement in body:
        for node in ast.walk(statement):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0]
            if isinstance(target, ast.Attribute) and target.attr == column and dotted_name(target.value) == record:
                written = _state(node.value, column)
                if written is not None and written[0] == machine:
                    left.setdefault(machine, set()).update(sources - {written[1]})


def _filtered_update(call: ast.Call) -> list[tuple[str, frozenset[str]]]:
    """`....filter(status=PENDING).update(status=EXPIRED)`: the states the update moves rows out of."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "update" and isinstance(func.value, ast.Call)):
        return []
    found = []
    for keyword in call.keywords:
        if keyword.arg is None or not _is_state_column(keyword.arg):
            continue
        written = _state(keyword.value, keyword.arg)
        link: ast.expr = func.value
        while written is not None and isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
            if link.func.attr == "filter":
                for condition in link.keywords:
                    if condition.arg in (keyword.arg, f"{keyword.arg}__in"):
                        values = [condition.value] if condition.arg == keyword.arg else elements(condition.value)
                        named = [_state(v, keyword.arg) for v in values or ()]
                        states = frozenset(n[1] for n in named if n is not None and n[0] == written[0])
                        found.append((written[0], states - {written[1]}))
            link = link.func.value
    return found


def _is_state_column(column: str) -> bool:
    lowered = column.lower()
    return lowered in STATE_COLUMNS or lowered.rsplit("_", 1)[-1] in ("status", "state")


def _state(value: ast.expr, column: str) -> tuple[str, str] | None:
    """A state as written: a member (`Status.SENT`, `Export.COMPLETED`) or a string."""
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return f"column:{column.lower()}", value.value
    if isinstance(value, ast.Attribute):
        owner = value.value
        name = owner.attr if isinstance(owner, ast.Attribute) else owner.id if isinstance(owner, ast.Name) else ""
        if name not in ("", "self", "cls") and (name[:1].isupper() or value.attr.isupper()):
            return name, value.attr  # not `self.STATUS_SENT`: every class of the project would share `self`
    return None


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue))
