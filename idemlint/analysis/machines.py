"""The state machines a project writes down: which states each state may move to.

A project that declares its lifecycle says which moves are legal, and so which writes can
move a record backward:
- a table of moves, `{Status.CREATED: [Status.PAID, Status.EXPIRED], ..., Status.FULFILLED: []}`
  (a dict whose keys are members of one enum and whose values are collections of them);
- django-fsm's `@transition(field=state, source=[...], target=...)` (viewflow's
  `@state.transition(...)` too), each decorated method one move.

A write with no precondition of a state that every state of the machine can reach (FULFILLED
above) never moves a record backward: at worst it skips steps the machine allows. One that
some state cannot reach (CREATED, from PAID) can. IDM103 reads the machine to tell the two
apart and to name the real predecessors in its help text.

Facts come from stdlib `ast`, and only for files whose bytes show such a table or decorator.
A machine is named by its enum (`Status`, the part before the member) or, for states written
as strings, by its column (`column:state`); tables for the same name are joined.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from idemlint.analysis.syntax import stdlib_tree
from idemlint.knowledge.states import TOMBSTONE_STATES, TRANSITION_DECORATOR

ANY_STATE = "*"  # django-fsm's `source="*"`: from every state
ANY_OTHER_STATE = "+"  # django-fsm's `source="+"`: from every state but the target

# a table's row as it is usually written, `    Status.CREATED: [` (two or more in a file), or
# the decorator: the bytes a file must hold before its AST is read
_TABLE_ROW = re.compile(rb"^[ \t]*[A-Za-z_][\w.]*\.\w+[ \t]*:[ \t]*(?:\[|\(|\{|set\(|frozenset\()", re.MULTILINE)
_DECORATOR = re.compile(rb"^[ \t]*@[\w.]*\b" + TRANSITION_DECORATOR.encode() + rb"\(", re.MULTILINE)

Moves = dict[str, dict[str, frozenset[str]]]  # machine -> state -> the states it may move to


@dataclass(frozen=True)
class Machine:
    """One declared machine: each state and the states it may move to (`*`/`+` for any)."""

    moves: Mapping[str, frozenset[str]]

    @property
    def states(self) -> frozenset[str]:
        named = set(self.moves).union(*self.moves.values())
        return frozenset(named - {ANY_STATE, ANY_OTHER_STATE})

    def successors(self, state: str) -> frozenset[str]:
        anywhere = self.moves.get(ANY_STATE, frozenset())
        other = self.moves.get(ANY_OTHER_STATE, frozenset()) - {state}
        return self.moves.get(state, frozenset()) | anywhere | other

    def reaching(self, target: str) -> frozenset[str]:
        """The states from which the machine leads to `target` (one search backwards)."""
        states = self.states
        if target in self.moves.get(ANY_STATE, ()) or target in self.moves.get(ANY_OTHER_STATE, ()):
            return states
        before: dict[str, set[str]] = {}
        for source, targets in self.moves.items():
            for following in targets:
                before.setdefault(following, set()).add(source)
        found: set[str] = set()
        todo = [target]
        while todo:
            for source in before.get(todo.pop(), ()):
                if source in (ANY_STATE, ANY_OTHER_STATE):
                    return states  # every state moves to a state that leads there
                if source not in found:
                    found.add(source)
                    todo.append(source)
        return frozenset(found)

    def cannot_reach(self, target: str) -> tuple[str, ...]:
        """The states a record may be in from which the machine never leads to `target`:
        writing `target` there with no precondition moves the record backward."""
        reaching = self.reaching(target)
        return tuple(sorted(s for s in self.states if s != target and s not in reaching))

    def predecessors(self, target: str) -> tuple[str, ...]:
        """The states with a move straight to `target` (a write's allowed preconditions)."""
        return tuple(sorted(s for s in self.states if s != target and target in self.moves.get(s, frozenset())))


def declared_moves(source: bytes, path: str = "") -> Moves:
    """The machines one file declares (see the module's docstring); {} for most files."""
    rows = len(_TABLE_ROW.findall(source)) if b":" in source else 0
    if rows < 2 and not (TRANSITION_DECORATOR.encode() in source and _DECORATOR.search(source)):
        return {}
    try:
        tree = stdlib_tree(source, path or "<unknown>")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    found: Moves = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_names_moves(t) for t in targets):
                _add(found, _table(node.value))
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for decorator in method.decorator_list:
                        _add(found, _decorated_move(decorator, node.name))
    return found


# a table's name says which way it points: `ALLOWED_TRANSITIONS`, `NEXT_STATES`, `MOVES`,
# `valid_status_changes` lead forward; `REQUIRED_BEFORE`, `PREVIOUS_STATES`, `UNDO_CHANGES` list
# what comes first or what an undo may go back to, and are not read
_FORWARD = re.compile(
    r"transition|moves?\b|moves_|(?:^|_)changes?(?:$|_)|next|allowed|successor|flow|graph", re.IGNORECASE
)
_BACKWARD = re.compile(
    r"before|prev|from|required|predecessor|parent|(?:^|_)(?:undo|revert|rollback|back_?to)(?:_|$)", re.IGNORECASE
)
# a machine this large is not a record's lifecycle (and its reachability would cost too much)
MAX_STATES = 200


def _names_moves(target: ast.expr) -> bool:
    name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else ""
    return bool(_FORWARD.search(name)) and not _BACKWARD.search(name)


def join(declared: Iterable[Moves]) -> dict[str, Machine]:
    """One machine per name from every file's tables. A name declared in more than one file,
    or a column whose moves more than one class declares, is ambiguous (two `Status` enums,
    two models with a `state` field): no machine for it, rather than one that mixes them."""
    joined: Moves = {}
    files: dict[str, int] = {}
    for declared_here in declared:
        for name in declared_here:
            files[name] = files.get(name, 0) + 1
        _add(joined, declared_here)
    columns: dict[str, set[str]] = {}
    for name in joined:
        if name.startswith("column:"):
            column, _, owner = name.partition("@")
            columns.setdefault(column, set()).add(owner)
    machines: dict[str, Machine] = {}
    for name, table in sorted(joined.items()):
        column, _, _owner = name.partition("@")
        if files[name] > 1 or name.startswith("column:") and len(columns[column]) > 1:
            continue
        machine = Machine(dict(sorted(table.items())))
        if len(machine.states) <= MAX_STATES:
            machines[column if name.startswith("column:") else name] = machine
    return machines


def _add(into: Moves, moves: Moves | None) -> None:
    for name, table in (moves or {}).items():
        machine = into.setdefault(name, {})
        for state, targets in table.items():
            machine[state] = machine.get(state, frozenset()) | targets


def _member(expr: ast.expr) -> tuple[str, str] | None:
    """`Status.PAID` or `Order.Status.PAID`: (the enum as written, `Status` or `Order.Status`; the member)."""
    if not isinstance(expr, ast.Attribute):
        return None
    owner = dotted_name(expr.value)
    return (owner, expr.attr) if owner else None


def dotted_name(expr: ast.expr) -> str | None:
    """`a.b.c` as written; None for anything but names and attributes."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        owner = dotted_name(expr.value)
        return f"{owner}.{expr.attr}" if owner else None
    return None


def decorator_name(decorator: ast.expr) -> str:
    """`a.b` for `@a.b` and `@a.b(...)`; "" for anything else."""
    return dotted_name(decorator.func if isinstance(decorator, ast.Call) else decorator) or ""


def elements(expr: ast.expr) -> list[ast.expr] | None:
    """The items of `[...]`, `(...)`, `{...}`, `set(...)`, `frozenset({...})`; None otherwise."""
    if isinstance(expr, (ast.List, ast.Tuple, ast.Set)):
        return list(expr.elts)
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and not expr.keywords:
        if expr.func.id in ("set", "frozenset", "tuple", "list") and len(expr.args) <= 1:
            return elements(expr.args[0]) if expr.args else []
    return None


def _table(node: ast.Dict) -> Moves | None:
    """A table of moves: at least two keys, every key a member of one enum, every value a
    collection of its members. Anything else in the dict and it is not one."""
    if len(node.keys) < 2:
        return None
    enum = None
    moves: dict[str, frozenset[str]] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        source = _member(key) if key is not None else None
        items = elements(value)
        if source is None or items is None or enum not in (None, source[0]):
            return None
        enum = source[0]
        targets = [_member(item) for item in items]
        if any(t is None or t[0] != enum for t in targets):
            return None
        moves[source[1]] = moves.get(source[1], frozenset()) | {t[1] for t in targets if t is not None}
    return {enum: moves} if enum else None


def _decorated_move(decorator: ast.expr, owner: str) -> Moves | None:
    """`@transition(field=state, source=[A, B], target=C)` in class `owner`: the move A/B -> C."""
    if not isinstance(decorator, ast.Call):
        return None
    func = decorator.func
    called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if called != TRANSITION_DECORATOR:
        return None
    given = {k.arg: k.value for k in decorator.keywords if k.arg}
    target, source = given.get("target"), given.get("source")
    if target is None or source is None:
        return None
    aimed = _state(target)
    sources = [_state(item) for item in (elements(source) or [source])]
    if aimed is None or any(s is None for s in sources):
        return None
    enum, state = aimed
    if not enum:  # states written as strings: the machine is the column's
        column = _column(given.get("field")) or (
            func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
        )
        if column is None:
            return None
        enum = f"column:{column}@{owner}"
    if any(s is not None and s[0] not in ("", enum, aimed[0]) for s in sources):
        return None  # states of another machine: not this one's move
    return {enum: {s[1]: frozenset({state}) for s in sources if s is not None}}


def _state(expr: ast.expr) -> tuple[str, str] | None:
    """A state as a decorator names it: an enum member, or a string (enum name '')."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return "", expr.value
    return _member(expr)


def _column(expr: ast.expr | None) -> str | None:
    """`field=state`, `field="state"` or `field=Model.state`: the column's name."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value
    return None


def written_state(
    machines: Mapping[str, Machine], column: str, kind: str, text: str, imports: Mapping[str, str]
) -> tuple[Machine, str] | None:
    """The declared machine a write's value belongs to and the state it names: `Status.PAID`
    (also through `import ... as`) is `Status`'s, a string is its column's; None if undeclared."""
    if kind == "literal":
        machine = machines.get(f"column:{column}")
        return (machine, text) if machine is not None and text in machine.states else None
    parts = text.split(".")
    if kind != "constant" or len(parts) < 2:
        return None
    owner = ".".join(parts[:-1])
    if len(parts) == 2 and parts[0] in imports:
        owner = imports[parts[0]].rsplit(".", 1)[-1]  # `from .states import Status as S`: `S.PAID`
    machine = machines.get(owner) or machines.get(parts[-2])  # `states.Status.PAID`: `Status`
    return (machine, parts[-1]) if machine is not None and parts[-1] in machine.states else None


def describe(machines: Mapping[str, Machine], where: Mapping[str, list[str]]) -> list[str]:
    """The machines as `idemlint states` prints them: each state's moves, the final states,
    and the states every state reaches (IDM103 does not report writes of those)."""
    lines: list[str] = []
    for name, machine in machines.items():
        title = f"the {name.removeprefix('column:')} column" if name.startswith("column:") else name
        lines.append(f"{title} ({', '.join(where.get(name, []))})")
        for source in sorted(machine.states | set(machine.moves)):
            shown = {ANY_STATE: "any state", ANY_OTHER_STATE: "any other state"}.get(source, source)
            targets = sorted(machine.moves.get(source, ()))
            lines.append(f"  {shown} -> {', '.join(targets)}" if targets else f"  {shown} (final)")
        sinks = [s for s in sorted(machine.states) if not machine.cannot_reach(s)]
        lines.append(f"  every state leads to: {', '.join(sinks) if sinks else '(none)'}")
    return lines


Declared = tuple[Machine, str] | None  # the project's machine a written state belongs to, and the state


def never_backward(declared: Declared, text: str) -> bool:
    """A write no state can be moved backward by: every state of the project's declared
    machine can reach it, or, with no machine declared, it is a tombstone (`deleted`)."""
    if declared is not None:
        return not declared[0].cannot_reach(declared[1])
    return text.rsplit(".", 1)[-1].lower() in TOMBSTONE_STATES


def backward_from(declared: Declared) -> str:
    """For a declared machine: the states the write can move a record back from."""
    if declared is None:
        return ""
    machine, state = declared
    stuck = machine.cannot_reach(state)
    named = ", ".join(stuck[:-1]) + f" or {stuck[-1]}" if 1 < len(stuck) <= 3 else stuck[0]
    rest = f" and {len(stuck) - 1} more" if len(stuck) > 3 else ""
    return f"; the project's state machine never leads from {named}{rest} to {state}, so this moves such a record back"


def predecessors(declared: Declared, kind: str, text: str) -> str:
    """The states the declared machine moves to this one from, spelt as the write spells its value."""
    if declared is None or not declared[0].predecessors(declared[1]):
        return "<the allowed predecessors>"
    machine, state = declared
    if kind == "constant":
        prefix = text[: -len(state)]
        return ", ".join(f"{prefix}{s}" for s in machine.predecessors(state))
    return ", ".join(repr(s) for s in machine.predecessors(state))
