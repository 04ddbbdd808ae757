"""The state machines a project declares (`analysis/machines.py`), read from real parses."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.analysis.final_states import join_evidence, state_evidence
from idemlint.analysis.machines import Machine, declared_moves, join, written_state
from idemlint.cli import cli

TABLE = b"""
class Status(enum.Enum):
    NEW = "new"
    PAID = "paid"
    DONE = "done"
    VOID = "void"

MOVES = {
    Status.NEW: [Status.PAID, Status.VOID],
    Status.PAID: frozenset({Status.DONE}),
    Status.DONE: set(),
    Status.VOID: (),
}
"""


def test_a_table_of_moves_between_members_of_one_enum_is_a_machine() -> None:
    assert declared_moves(TABLE) == {
        "Status": {
            "NEW": frozenset({"PAID", "VOID"}),
            "PAID": frozenset({"DONE"}),
            "DONE": frozenset(),
            "VOID": frozenset(),
        }
    }


def test_a_table_of_changes_checked_inside_a_setter_is_a_machine() -> None:
    """`valid_status_changes` in a model's own `set_status` names the moves it allows; a table
    of labels beside it names none."""
    setter = (
        b"class Order:\n"
        b"    def set_status(self, new):\n"
        b"        valid_status_changes = {\n"
        b"            Status.NEW: (Status.PAID, Status.VOID),\n"
        b"            Status.PAID: (),\n"
        b"        }\n"
        b"        status_labels = {\n"
        b"            Kind.A: (Kind.B,),\n"
        b"            Kind.B: (),\n"
        b"        }\n"
    )
    assert declared_moves(setter) == {"Status": {"NEW": frozenset({"PAID", "VOID"}), "PAID": frozenset()}}
    table = b"    Status.NEW: [Status.PAID],\n    Status.PAID: [Status.DONE],\n}\n"
    assert declared_moves(b"STATUS_CHANGES_MAP = {\n" + table) != {}
    for name in (b"UNDO_CHANGES", b"CURRENCY_EXCHANGES", b"REVERT_CHANGES"):
        assert declared_moves(name + b" = {\n" + table) == {}, name


def test_dicts_that_only_look_like_tables_are_not_machines() -> None:
    labels = b'LABELS = {\n    Status.NEW: ["New"],\n    Status.PAID: ["Paid"],\n}\n'
    mixed = b"MIXED = {\n    Status.NEW: [Other.PAID],\n    Status.PAID: [Status.DONE],\n}\n"
    one_row = b"ONE = {\n    Status.NEW: [Status.PAID],\n}\n"
    two_enums = b"TWO = {\n    Status.NEW: [Status.PAID],\n    Kind.A: [Kind.B],\n}\n"
    for source in (labels, mixed, one_row, two_enums, b"broken = {\n    Status.NEW: [\n    Status.X: [\n"):
        assert declared_moves(source) == {}, source


def test_transition_decorators_declare_moves_by_enum_or_by_column() -> None:
    source = b"""
class Post(models.Model):
    state = FSMField(default="new")

    @transition(field=state, source="new", target="published")
    def publish(self): ...

    @transition(field=state, source="*", target="removed")
    def remove(self): ...

    @status.transition(source=[Flow.A, Flow.B], target=Flow.C)
    def finish(self): ...
"""
    assert declared_moves(source) == {
        "column:state@Post": {"new": frozenset({"published"}), "*": frozenset({"removed"})},
        "Flow": {"A": frozenset({"C"}), "B": frozenset({"C"})},
    }


def test_a_name_two_machines_share_is_no_machine_and_a_backward_table_is_not_read() -> None:
    """Two `Status` enums nested in two models, or one `state` field's moves declared by two
    classes, would mix into one machine: neither is used. A table named for what comes before
    (`REQUIRED_BEFORE`) points the other way and is not read as moves."""
    order = b"class Order:\n    MOVES = {\n        Status.NEW: [Status.PAID],\n        Status.PAID: [],\n    }\n"
    job = b"class Job:\n    MOVES = {\n        Status.NEW: [Status.DONE],\n        Status.DONE: [Status.NEW],\n    }\n"
    assert join([declared_moves(order), declared_moves(job)]) == {}
    nested = b"TRANSITIONS = {\n    Order.Status.NEW: [Order.Status.PAID],\n    Order.Status.PAID: [],\n}\n"
    assert list(join([declared_moves(nested), declared_moves(job)])) == ["Order.Status", "Status"]
    fsm = b"class %s:\n    @transition(field=state, source='new', target='done')\n    def finish(self): ...\n"
    assert list(join([declared_moves(fsm % b"Post")])) == ["column:state"]
    assert join([declared_moves(fsm % b"Post"), declared_moves(fsm % b"Page")]) == {}
    before = b"REQUIRED_BEFORE = {\n    Status.NEW: [],\n    Status.PAID: [Status.NEW],\n}\n"
    assert declared_moves(before) == {}


def test_reachability_is_one_search_per_state_and_huge_tables_are_no_lifecycle() -> None:
    chain = {f"S{i}": frozenset({f"S{i + 1}"}) for i in range(5000)}
    machine = Machine(chain)
    assert machine.cannot_reach("S0")[:2] == ("S1", "S10")
    assert machine.reaching("S5000") == frozenset(chain)
    rows = "".join(f"    Status.S{i}: [Status.S{i + 1}],\n" for i in range(300))
    assert join([declared_moves(f"NEXT_STATES = {{\n{rows}}}\n".encode())]) == {}


def test_a_state_every_state_reaches_is_never_written_backward() -> None:
    machine = join([declared_moves(TABLE)])["Status"]
    assert machine.cannot_reach("DONE") == ("VOID",)  # a voided record cannot be done
    assert machine.cannot_reach("NEW") == ("DONE", "PAID", "VOID")
    assert machine.predecessors("DONE") == ("PAID",)
    anywhere = Machine({"new": frozenset({"open"}), "*": frozenset({"closed"}), "+": frozenset({"new"})})
    assert anywhere.cannot_reach("closed") == ()
    assert anywhere.cannot_reach("new") == ()  # `+`: from every other state


def test_a_write_names_its_machine_by_enum_alias_or_column() -> None:
    machines = {"Status": Machine({"NEW": frozenset({"PAID"})}), "column:state": Machine({"a": frozenset({"b"})})}
    assert written_state(machines, "status", "constant", "S.PAID", {"S": "shop.states.Status"}) == (
        machines["Status"],
        "PAID",
    )
    assert written_state(machines, "status", "constant", "models.Status.NEW", {}) == (machines["Status"], "NEW")
    assert written_state(machines, "state", "literal", "b", {}) == (machines["column:state"], "b")
    assert written_state(machines, "status", "constant", "Status.GONE", {}) is None  # not one of its states
    assert written_state(machines, "status", "literal", "b", {}) is None  # another column's


def test_the_states_command_prints_each_machine_its_final_states_and_what_every_state_reaches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(Path(__file__).parent / "projects" / "state_machines", tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    result = CliRunner().invoke(cli, ["states"])
    assert (result.exit_code, result.stdout.splitlines()) == (
        0,
        [
            "IntentState (billing/states.py)",
            "  CREATED -> EXPIRED, PAID",
            "  ERRORED -> FULFILLED",
            "  EXPIRED -> CREATED",
            "  FULFILLED (final)",
            "  PAID -> ERRORED, FULFILLED",
            "  every state leads to: FULFILLED",
            "the state column (billing/models.py)",
            "  closed (final)",
            "  new -> closed, open",
            "  open -> closed",
            "  every state leads to: closed",
        ],
    )
    missing = CliRunner().invoke(cli, ["states", "nowhere"])
    assert missing.exit_code == 2
    assert missing.stderr.strip() == "idemlint: nowhere: cannot read: no such file or directory"


def test_a_state_named_with_control_characters_cannot_print_a_line_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.idemlint]\n")
    (tmp_path / "models.py").write_text(
        "class Post:\n"
        '    @transition(field=state, source="new", target="done\\x0amodels.py:1:1: IDM999 forged\\x1b[2J")\n'
        "    def finish(self): ...\n"
    )
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["states"])
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "the state column (models.py)",
        "  done\\x0amodels.py:1:1: IDM999 forged\\x1b[2J (final)",
        "  new -> done\\x0amodels.py:1:1: IDM999 forged\\x1b[2J",
        "  every state leads to: done\\x0amodels.py:1:1: IDM999 forged\\x1b[2J",
    ]


def test_the_guards_a_project_writes_imply_its_final_states() -> None:
    """A state some guard gives up on and no guarded move leaves is final: a test that
    leaves (`return`, `raise`, `continue`) gives up; a write under a test for the state, after
    a test against it that leaves, or an update filtered on it, leaves it."""
    source = b"""
from outbox.states import MailState as S

def send(mail):
    if mail.state in (MailState.SENT, MailState.SENDING):
        return
    mail.state = MailState.SENDING

def requeue(job):
    if job.status != Job.Status.RUNNING or job.locked:
        raise Busy()
    job.status = Job.Status.QUEUED

def retry(job):
    if job.status != Job.Status.FAILED and job.attempts < 3:
        raise Busy()  # past it, the job may be in any state
    job.status = Job.Status.QUEUED

def sweep():
    for job in jobs:
        if job.status == Job.Status.DONE:
            continue
    Mail.objects.filter(state__in=[S.SENDING]).update(state=S.DRAFT)

class Page:
    def publish(self):
        if self.status == "live":
            return
"""
    evidence = state_evidence(source)
    assert evidence == {
        "MailState": (frozenset({"SENDING"}), frozenset({"SENT", "SENDING"}), frozenset({"SENDING", "DRAFT"})),
        "Job.Status": (frozenset({"RUNNING"}), frozenset({"DONE"}), frozenset({"QUEUED"})),
        "but:MailState": (frozenset({"SENDING,SENT"}), frozenset(), frozenset()),
        "class:Page": (frozenset(), frozenset(), frozenset()),
    }  # strings name no table: not read; an alias is followed; `send` leaves every state but SENT, SENDING
    # SENT: given up on, and DRAFT and SENDING are both left; DONE: QUEUED may follow it
    assert join_evidence([evidence]) == {"MailState": frozenset({"SENT"})}
    sent_left = {"MailState": (frozenset({"SENT"}), frozenset(), frozenset())}
    assert join_evidence([evidence, sent_left]) == {}  # left by a guarded move elsewhere
    queued_left = {"Job.Status": (frozenset({"QUEUED"}), frozenset(), frozenset())}
    assert join_evidence([evidence, queued_left]) == {
        "MailState": frozenset({"SENT"}),
        "Job.Status": frozenset({"DONE"}),
    }
    assert state_evidence(b"x = 1\n") == {}
    assert state_evidence(b"class Plain:\n    pass\n") == {"class:Plain": (frozenset(), frozenset(), frozenset())}


def test_a_guard_that_moves_the_state_before_it_leaves_gives_nothing_up() -> None:
    source = b"""
def reopen(mail):
    if mail.state == MailState.SENT:
        mail.state = MailState.DRAFT
        mail.save()
        return

def resend(mail, force):
    if mail.state == MailState.SENT and not force:
        return  # gives SENT up only without `force`
    mail.state = MailState.SENDING
"""
    assert state_evidence(source) == {"MailState": (frozenset({"SENT"}), frozenset(), frozenset({"DRAFT", "SENDING"}))}


def test_two_classes_of_one_name_are_no_machine() -> None:
    """`Status` nested in two models, or defined in two modules: their states would mix."""
    guards = b"def f(o):\n    if o.status == Status.DONE:\n        return\n"
    one = state_evidence(guards + b"class Status:\n    DONE = 'done'\n")
    other = state_evidence(b"class Status(enum.Enum):\n    PAID = 'paid'\n")
    assert join_evidence([one]) == {"Status": frozenset({"DONE"})}
    assert join_evidence([one, other]) == {}
    nested = state_evidence(b"def f(o):\n    if o.status == Order.Status.VOID:\n        return\n")
    assert list(nested) == ["Order.Status"]


def test_the_states_command_prints_the_final_states_the_guards_imply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(Path(__file__).parent / "projects" / "implied_finals", tmp_path / "p")
    monkeypatch.chdir(tmp_path / "p")
    result = CliRunner().invoke(cli, ["states"])
    assert (result.exit_code, result.stdout.splitlines()) == (
        0,
        [
            "No state machine declared (a table of one enum's moves, or @transition decorators).",
            "Final states implied by the project's guards (IDM103 does not report a write of one with no precondition):",
            "  MailState: SENT",
        ],
    )
