"""The final states a project's own guards imply, where it declares no state machine.

A project that never writes its lifecycle down still shows it in the tests it makes before
it writes a state:
- a guard that gives up on a state (`if mail.state in (SENT, SENDING): return`) says a record
  in that state is done there;
- a guarded move (`if order.status == PAID: order.status = REFUNDED`, `if job.status !=
  QUEUED: raise ...` then `job.status = RUNNING`, `.filter(status=PENDING).update(status=
  EXPIRED)`) says a record leaves the state it tests.
A state some guard gives up on and no guarded move leaves is final. It is the machine's only
one, and a write of it with no precondition moves no record backward, where every other state
the project writes or tests is one a guarded move leaves: then nothing known follows it.
IDM103 reads that. A write of one of several final states (SENT and FAILED) may overwrite
another, and one of a state some unguarded write may follow (`shipped`, then `delivered` from
a webhook) may move a record back: both stay reported.

Facts come from stdlib `ast`, only for files whose bytes show a state test. Only states held
by a class are read (`MailState.SENT`, `Order.Status.PAID`; an import alias is followed), not
strings: a string state names no table, and an API object's `"completed"` would count for
every table's. A machine is named by its class as written less the module (`Order.Status`);
a class name two modules define at their top level is two machines, and none is inferred for
it (a nested `Order.Status` is named with its model).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from idemlint.analysis.machines import dotted_name, elements
from idemlint.analysis.syntax import stdlib_tree
from idemlint.knowledge.states import STATE_COLUMNS

# per machine: (states some guard moves a record out of, states some guard gives up on, states
# written); and, under `class:<name>`, each class the file defines (its sets empty)
Evidence = dict[str, tuple[frozenset[str], frozenset[str], frozenset[str]]]
_CLASS = "class:"
_BUT = "but:"  # under `but:<machine>`, in the first set: states a move leaves all others for ("SENT,SENDING")
_NONE: tuple[frozenset[str], frozenset[str], frozenset[str]] = (frozenset(), frozenset(), frozenset())
_TOP_CLASS = re.compile(rb"^class[ \t]+(\w+)", re.MULTILINE)

_WORDS = "|".join(sorted(STATE_COLUMNS))
# `.status ==`, `.order_state in`, `status=` / `state__in=` in a filter: a state test
_STATE_TEST = re.compile(
    rb"\.(?:\w+_)?(?:"
    + _WORDS.encode()
    + rb")\s*(?:==|!=|in\b|not\s+in\b)|\b(?:"
    + _WORDS.encode()
    + rb")(?:__in)?\s*="
)


def parse_state_tests(source: bytes, path: str = "") -> ast.Module | None:
    """The file's `ast`, where its bytes show a state test (None elsewhere, or unparsable)."""
    if not _STATE_TEST.search(source):
        return None
    try:
        return stdlib_tree(source, path or "<unknown>")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def state_evidence(source: bytes, path: str = "") -> Evidence:
    """What one file's guards say of each machine's states, and the classes it defines at its
    top level (read from every file: an enum's own module tests no state)."""
    return evidence_of(source, parse_state_tests(source, path))


def evidence_of(source: bytes, tree: ast.Module | None) -> Evidence:
    """`state_evidence` of a file already parsed (`tree`: `parse_state_tests`)."""
    defined: Evidence = {_CLASS + name.decode(): _NONE for name in _TOP_CLASS.findall(source)}
    if tree is None:
        return defined
    facts = _Facts(_aliases(tree))
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            facts.read_block(node.body)
        elif isinstance(node, ast.Call):
            facts.filtered_update(node)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute):
            if is_state_attribute(node.targets[0].attr):
                written = facts.state(node.value)
                if written is not None:
                    facts.written.setdefault(written[0], set()).add(written[1])
    machines = set(facts.left) | set(facts.refused) | set(facts.written)
    but: Evidence = {
        _BUT + name: (frozenset(excepted), frozenset(), frozenset()) for name, excepted in facts.left_but.items()
    }
    found: Evidence = {
        name: (
            frozenset(facts.left.get(name, ())),
            frozenset(facts.refused.get(name, ())),
            frozenset(facts.written.get(name, ())),
        )
        for name in sorted(machines)
    }
    return {**found, **but, **defined}


def join_evidence(files: Iterable[Evidence]) -> dict[str, frozenset[str]]:
    """Each machine's final state, from every file's evidence, where it has exactly one and
    every other state the project writes or tests is left by a guarded move. A machine whose
    class two files define is left out (two classes, one name)."""
    left: dict[str, set[str]] = {}
    refused: dict[str, set[str]] = {}
    known: dict[str, set[str]] = {}
    defined: dict[str, int] = {}
    left_but: dict[str, set[str]] = {}
    for evidence in files:
        for name, (moved_from, given_up, written) in evidence.items():
            if name.startswith(_CLASS):
                defined[name[len(_CLASS) :]] = defined.get(name[len(_CLASS) :], 0) + 1
                continue
            if name.startswith(_BUT):
                left_but.setdefault(name[len(_BUT) :], set()).update(moved_from)
                continue
            left.setdefault(name, set()).update(moved_from)
            refused.setdefault(name, set()).update(given_up)
            known.setdefault(name, set()).update(moved_from, given_up, written)
    for name, exceptions in left_but.items():  # every state but the ones excepted, now that all are known
        for excepted in exceptions:
            left.setdefault(name, set()).update(known.get(name, set()) - set(excepted.split(",")))
    found: dict[str, frozenset[str]] = {}
    for name in sorted(refused):
        finals = refused[name] - left.get(name, set())
        if defined.get(name, 0) > 1 or len(finals) != 1:  # `Status` in two modules: which one is unknown
            continue
        if known[name] - finals <= left.get(name, set()):
            found[name] = frozenset(finals)
    return found


def is_sole_final(
    finals: Mapping[str, frozenset[str]], column: str, kind: str, text: str, imports: Mapping[str, str]
) -> bool:
    """Whether a written state (`kind`/`text` as IDM103 reads a write's value) is its
    machine's one final state."""
    named = _written(kind, text, imports)
    return named is not None and finals.get(named[0]) == frozenset({named[1]})


def describe_finals(finals: Mapping[str, frozenset[str]]) -> list[str]:
    """The implied final states as `idemlint states` prints them."""
    if not finals:
        return []
    lines = [
        "Final states implied by the project's guards (IDM103 does not report a write of one with no precondition):"
    ]
    lines += [f"  {name}: {', '.join(sorted(states))}" for name, states in finals.items()]
    return lines


def _written(kind: str, text: str, imports: Mapping[str, str]) -> tuple[str, str] | None:
    parts = text.split(".")
    if kind != "constant" or len(parts) < 2:
        return None
    if parts[0] in imports:  # `from .states import Status as S`: `S.PAID` is `Status.PAID`
        parts = [*imports[parts[0]].split("."), *parts[1:]]
    owner = _without_module(parts[:-1])
    return (".".join(owner), parts[-1]) if owner else None


def _without_module(parts: list[str]) -> list[str]:
    """`models.Order.Status` -> `Order.Status`: a class is named from its first capital."""
    for at, part in enumerate(parts):
        if part[:1].isupper():
            return parts[at:]
    return []


def _aliases(tree: ast.Module) -> dict[str, str]:
    """`from outbox.states import MailState as S`: S -> MailState."""
    return {
        alias.asname: alias.name
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
        if alias.asname
    }


class _Facts:
    """One file's evidence, gathered block by block."""

    def __init__(self, aliases: dict[str, str]) -> None:
        self.aliases = aliases
        self.left: dict[str, set[str]] = {}
        self.refused: dict[str, set[str]] = {}
        self.written: dict[str, set[str]] = {}
        self.left_but: dict[str, set[str]] = {}  # states left from every state but these (comma-joined)

    def state(self, value: ast.expr) -> tuple[str, str] | None:
        """A state held by a class (`Status.SENT`, `Order.Status.PAID`): (machine, state)."""
        if not isinstance(value, ast.Attribute):
            return None
        owner = dotted_name(value.value)
        if owner is None:
            return None
        parts = owner.split(".")
        parts = [*self.aliases.get(parts[0], parts[0]).split("."), *parts[1:]]
        named = _without_module(parts)
        return (".".join(named), value.attr) if named else None

    def read_block(self, body: list[ast.stmt]) -> None:
        """The guards of one block, and of the blocks inside it."""
        for at, statement in enumerate(body):
            if isinstance(statement, ast.If):
                tested = self.state_test(statement.test)
                if tested is not None:
                    record, column, positive, plain, machine, states = tested
                    if positive and self.moves(statement.body, record, column, machine, states):
                        pass  # `if x.state == PAID: x.state = REFUNDED` (then perhaps `return`)
                    elif positive and plain and _leaves(statement.body):
                        self.refused.setdefault(machine, set()).update(states)  # `if x.state == DONE: return`
                        self.moves_from_the_rest(body[at + 1 :], record, column, machine, states)
                    elif not positive and _leaves(statement.body):  # `if x.state != QUEUED: raise`, then a write
                        self.moves(body[at + 1 :], record, column, machine, states)
            for inner in _blocks(statement):
                self.read_block(inner)

    def state_test(self, test: ast.expr) -> tuple[str, str, bool, bool, str, frozenset[str]] | None:
        """`x.status == S`, `x.status in (A, B)`, `!=`/`not in`: (the record, the column, whether
        it tests for the states, whether it is the whole test, the machine, the states). Also
        one side of an `and` testing for them, or of an `or` testing against them: what holds
        in the body, or past a body that leaves."""
        if isinstance(test, ast.BoolOp):
            found = [t for t in (self.state_test(v) for v in test.values) if t is not None]
            if len(found) == 1 and found[0][2] == isinstance(test.op, ast.And):
                return (*found[0][:3], False, *found[0][4:])
            return None
        if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, ast.Attribute)):
            return None
        record, column = dotted_name(test.left.value), test.left.attr
        if record is None or not is_state_attribute(column):
            return None
        op, right = test.ops[0], test.comparators[0]
        values = [right] if isinstance(op, (ast.Eq, ast.NotEq)) else elements(right)
        if values is None or not isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)):
            return None
        named = [self.state(value) for value in values]
        machines = {n[0] for n in named if n is not None}
        if not named or None in named or len(machines) != 1:
            return None
        states = frozenset(n[1] for n in named if n)
        return record, column, isinstance(op, (ast.Eq, ast.In)), True, machines.pop(), states

    def moves(self, body: list[ast.stmt], record: str, column: str, machine: str, sources: frozenset[str]) -> bool:
        """Whether a block moves the tested record out of its states (it writes the column
        another state of the machine), noting them as left."""
        moved = False
        for statement in body:
            for node in ast.walk(statement):
                if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                    continue
                target = node.targets[0]
                if isinstance(target, ast.Attribute) and target.attr == column and dotted_name(target.value) == record:
                    written = self.state(node.value)
                    if written is not None and written[0] == machine and sources - {written[1]}:
                        self.left.setdefault(machine, set()).update(sources - {written[1]})
                        moved = True
        return moved

    def moves_from_the_rest(
        self, body: list[ast.stmt], record: str, column: str, machine: str, given_up: frozenset[str]
    ) -> None:
        """`if x.state in (SENT, SENDING): return`, then `x.state = SENDING`: every state but
        those given up on is left (which they are is known once every file is read)."""
        for statement in body:
            for node in ast.walk(statement):
                if isinstance(node, ast.Assign) and len(node.targets) == 1:
                    target = node.targets[0]
                    if (
                        isinstance(target, ast.Attribute)
                        and target.attr == column
                        and dotted_name(target.value) == record
                    ):
                        written = self.state(node.value)
                        if written is not None and written[0] == machine:
                            self.left_but.setdefault(machine, set()).add(",".join(sorted(given_up | {written[1]})))

    def filtered_update(self, call: ast.Call) -> None:
        """`....filter(status=PENDING).update(status=EXPIRED)`: rows moved out of PENDING."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "update" and isinstance(func.value, ast.Call)):
            return
        for keyword in call.keywords:
            if keyword.arg is None or not is_state_attribute(keyword.arg):
                continue
            written = self.state(keyword.value)
            if written is None:
                continue
            self.written.setdefault(written[0], set()).add(written[1])
            link: ast.expr = func.value
            while isinstance(link, ast.Call) and isinstance(link.func, ast.Attribute):
                if link.func.attr == "filter":
                    for condition in link.keywords:
                        if condition.arg in (keyword.arg, f"{keyword.arg}__in"):
                            values = [condition.value] if condition.arg == keyword.arg else elements(condition.value)
                            named = [self.state(v) for v in values or ()]
                            states = {n[1] for n in named if n is not None and n[0] == written[0]} - {written[1]}
                            self.left.setdefault(written[0], set()).update(states)
                link = link.func.value


def _blocks(statement: ast.stmt) -> list[list[ast.stmt]]:
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return []  # read on its own
    blocks = [getattr(statement, name) for name in ("body", "orelse", "finalbody") if hasattr(statement, name)]
    blocks += [handler.body for handler in getattr(statement, "handlers", ())]
    blocks += [case.body for case in getattr(statement, "cases", ())]
    return [b for b in blocks if isinstance(b, list)]


def is_state_attribute(column: str) -> bool:
    """`status`, `state`, `order_status`: a column named like a state (the built-in names)."""
    lowered = column.lower()
    return lowered in STATE_COLUMNS or lowered.rsplit("_", 1)[-1] in ("status", "state")


def _leaves(body: list[ast.stmt]) -> bool:
    return bool(body) and isinstance(body[-1], (ast.Return, ast.Raise, ast.Continue))
