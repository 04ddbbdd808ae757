"""The plain records function summaries are made of, and how a call's arguments bind a
function's parameters. No CST node is kept in a `Summary` built for the project index
(`Step`s elsewhere hold a path and line), so summaries are plain data the index cache can store."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import string_value
from idemlint.knowledge.http import NOT_IDEMPOTENT_METHODS, WRITE_METHODS

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.policy.delays import SettingCall
else:
    cst = LazyModule("libcst", globals(), "cst")

# Rounds of following calls: within a module, then across modules. Each round extends a
# chain by one call, so a fact is seen through at most this many helpers.
MAX_DEPTH = 4


@dataclass(frozen=True)
class Step:
    """One link of a chain: what happens (`uuid.uuid4()`, `send()`) and where."""

    text: str
    node: cst.CSTNode | None = None  # in the file being checked
    path: str = ""  # elsewhere in the project (root-relative)
    line: int = 0


Chain = tuple[Step, ...]


# The arguments of a call: (the parameter it binds: a keyword name, or `#0`, `#1`... by
# position; the caller's own parameter it forwards unchanged, or ""; the text of a string
# literal it passes, or "")
Passed = tuple[tuple[str, str, str], ...]
STARRED = "*"  # the slot of a `*args` or `**kwargs` argument


def passed_arguments(call: cst.Call, own_params: frozenset[str] = frozenset()) -> Passed:
    """What a call passes, for matching against a callee's key parameters. A star argument
    passes nothing we can see, and is kept as the slot `*`: it may fill any parameter."""
    passed: list[tuple[str, str, str]] = []
    position = 0
    for arg in call.args:
        if arg.star:
            passed.append((STARRED, "", ""))
            continue
        value = arg.value
        source = value.value if isinstance(value, cst.Name) and value.value in own_params else ""
        literal = string_value(value) or (value.value if isinstance(value, (cst.Integer, cst.Float)) else "")
        if arg.keyword is not None:
            passed.append((arg.keyword.value, source, literal))
        else:
            passed.append((f"#{position}", source, literal))
            position += 1
    return tuple(passed)


@dataclass(frozen=True)
class Summary:
    """Facts about one function a caller inherits. Each chain starts at the first step inside
    the function and ends at the origin."""

    returns_key: Chain | None = None  # returns a fresh random key it made
    sends_key: Chain | None = None  # puts a fresh key in a key sink itself
    key_params: frozenset[str] = frozenset()  # `key or uuid4()`: passing one of these supplies the key
    params: tuple[str, ...] = ()  # positional parameters, without self/cls
    unkeyed_effect: Chain | None = None  # calls another system without an idempotency key
    effect: Chain | None = None  # calls another system at all
    effect_operation: str = ""  # the origin effect's operation, e.g. "requests.post"
    records_failure: Chain | None = None  # marks a definite failure on every call (`status = "failed"`)
    returns_count: Chain | None = None  # returns the row count of a conditional update (zero: a duplicate)
    # runs a conditional update, drops its count and hands back nothing: a caller that acts
    # after calling it acts for a duplicate too (`def close(pk): ...filter(status=OPEN).update(...)`)
    drops_count: Chain | None = None
    # an unkeyed HTTP request whose method is this parameter (`_request(self, method, path)`):
    # an unkeyed effect of every call that passes POST or PATCH there
    verb_param: str = ""
    verb_effect: Chain | None = None
    verb_operation: str = ""  # the request's operation, e.g. "self.session.request"
    # parameters whose default is a writing HTTP method (`def send(url, method="POST")`),
    # upper-cased: what a call that leaves the parameter out binds there
    verb_defaults: tuple[tuple[str, str], ...] = ()
    # sleeps on every call for a delay with no random part (`time.sleep(2 ** self.n * 0.1)`),
    # or for one computed from this parameter alone (`def sleep(ms): time.sleep(ms / 1000)`)
    waits_fixed: Chain | None = None
    wait_param: str = ""
    wait_chain: Chain | None = None
    # returns, on every return, a value with no random part that no parameter changes (`return
    # self.delay_ms`, `return 0.2`): a delay read through it (`config.get_delay_ms()`) is fixed
    returns_setting: Chain | None = None
    # a constructor whose jitter parameter defaults to none (`def __init__(self, backoff_factor=0,
    # backoff_jitter=0)`, a project's own retry policy): the step names that parameter
    opt_in_jitter: Chain | None = None
    # a predicate that says whether an exception is a lost race, on every return (`def
    # retry_on_conflict(exc): return isinstance(exc, WriteConflictError)`): a retry policy that
    # retries on it alone ends as the competition does
    lost_race_test: Chain | None = None
    # handed the error it is to judge (`def _on_error(exc, deadline, ...)`), it raises on some way:
    # a retry handler that hands it what it caught lets it decide whether to go round
    gives_up: Chain | None = None
    # raises once the parameters `past_params` say so (`def _check_attempts(attempt, limit): if
    # attempt > limit: raise`, the bare `raise` re-raising the error its caller handles): a retry
    # handler that hands it the loop's count or a deadline there has its bound in it
    raises_past: Chain | None = None
    past_params: tuple[str, ...] = ()
    # an HTTP status error (`raise_for_status()`, also for a 4xx) may leave it, raised there or
    # by a function it calls, with no handler ending it on the way: a task that retries that
    # error class (`autoretry_for=(HTTPError,)`) retries a 4xx only if it calls such a function
    raises_status_error: Chain | None = None
    # a method that sets its own instance's state column and saves it, on every call, with no
    # test first: (column, value kind, text) for a literal or constant (`def ship(self):
    # self.status = "shipped"; self.save()`), or (column, "param", the parameter) for the value
    # its caller passes (`def move_to(self, status)`); its callers write that state on their instance
    writes_state: tuple[str, str, str] | None = None
    state_chain: Chain | None = None
    # whose state `writes_state` sets: "self" (the method's own instance), or the parameter a
    # helper is given (`def mark_sending(notification): notification.status = "sending"; ...`),
    # so `mark_sending(n)` writes `n.status`
    state_owner: str = "self"
    # a function that writes columns of its own instance (or of the one it is given) as a sum
    # with their old values and saves them (`def add_credits(self, n): self.credits += n;
    # self.save()`): a caller that loaded the row without a lock loses one of two overlapping
    # runs' changes there (`analysis/db/adding_methods.py`)
    builds_on: tuple[str, ...] = ()
    built_chain: Chain | None = None
    built_owner: str = "self"
    # inserts a row of these models on some way through it, itself or through what it calls, with no
    # duplicate error handled there (`def add_execution(self, case): return Execution.objects.create(
    # run=self, case=case)`): a caller that found that row absent inserts it (`analysis/db/absent_rows.py`).
    # The chain leads to the first insert found, of `inserted_model`; `inserted_models` are all, sorted.
    inserts_row: Chain | None = None
    inserted_model: str = ""
    inserted_models: tuple[str, ...] = ()

    def slot_name(self, slot: str) -> str:
        """The parameter an argument slot (`#0` by position, or a keyword) binds."""
        if slot.startswith("#"):
            index = int(slot[1:])
            return self.params[index] if index < len(self.params) else ""
        return slot

    def verb_binding(self, passed: Passed) -> tuple[str, str]:
        """What a call gives the method parameter: (the literal, upper-cased, or ""; the
        caller's own parameter it forwards there, or "")."""
        if self.verb_effect is None:
            return "", ""
        for slot, source, literal in passed:
            if self.slot_name(slot) == self.verb_param:
                return literal.upper(), source
        if any(slot == STARRED for slot, _source, _literal in passed):
            return "", ""  # `send(url, **options)` may pass the method: the default may not hold
        return dict(self.verb_defaults).get(self.verb_param, ""), ""

    def unkeyed_effect_for(self, passed: Passed) -> tuple[Chain | None, str]:
        """The unkeyed effect a call with these arguments makes, and its operation: the
        function's own, or its request once the call names POST or PATCH."""
        if self.unkeyed_effect is not None:
            return self.unkeyed_effect, self.effect_operation
        method, _forwarded = self.verb_binding(passed)
        if method in NOT_IDEMPOTENT_METHODS:
            return self.verb_effect, f"{method} {self.verb_operation}"
        return None, ""

    def fixed_wait_for(self, passed: Passed, fixed_argument: Callable[[str], bool]) -> Chain | None:
        """Whether a call with these arguments sleeps a delay with no random part: always,
        or when what it passes as the delay parameter is fixed (`fixed_argument(slot)`)."""
        if self.waits_fixed is not None:
            return self.waits_fixed
        if self.wait_chain is not None:
            for slot, _source, _literal in passed:
                if self.slot_name(slot) == self.wait_param and fixed_argument(slot):
                    return self.wait_chain
        return None

    def effect_for(self, passed: Passed) -> Chain | None:
        """Whether a call with these arguments calls another system at all: a request whose
        method the call names as a write (POST, PUT, PATCH, DELETE) does; a GET does not."""
        if self.effect is not None:
            return self.effect
        method, _forwarded = self.verb_binding(passed)
        return self.verb_effect if method in WRITE_METHODS else None

    def key_binding(self, passed: Passed) -> tuple[bool, frozenset[str]]:
        """Whether a call with these arguments gives the function the key it would otherwise
        make, and which of the caller's own parameters it forwards into the function's key
        parameters (the caller then makes the key unless given one: a key parameter of its own)."""
        supplied, forwarded = False, set()
        for slot, source, _literal in passed:
            if self.slot_name(slot) in self.key_params:
                if source:
                    forwarded.add(source)
                else:
                    supplied = True
        return supplied, frozenset(forwarded)

    def supplied_by(self, call: cst.Call) -> bool:
        """The call passes a parameter the function uses instead of making a key (a value
        made outside a retry is the same on every attempt)."""
        supplied, forwarded = self.key_binding(passed_arguments(call))
        return supplied or bool(forwarded)

    @property
    def empty(self) -> bool:
        return not any(getattr(self, fact) for fact in CHAIN_FACTS)


# the facts a caller inherits as a chain of steps (every `Chain | None` field of a Summary):
# the project map stores their steps as plain data, the pre-filter knows the functions with each
CHAIN_FACTS = tuple(f.name for f in fields(Summary) if f.type == "Chain | None")


def bound_argument(call: cst.Call, summary: Summary, parameter: str) -> cst.BaseExpression | None:
    """The expression a call passes for one of the function's parameters, by keyword or position."""
    positional = [a for a in call.args if a.keyword is None and not a.star]
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == parameter:
            return arg.value
    if parameter in summary.params:
        index = summary.params.index(parameter)
        return positional[index].value if index < len(positional) else None
    return None


def fixed_argument(model: ModuleModel, call: cst.Call, setting: SettingCall | None = None) -> Callable[[str], bool]:
    """For a call in this file: whether the argument in a slot (`#0`, `ms`) is a delay with
    no random part (reading the settings `setting` knows, when given)."""
    from idemlint.analysis.policy.delays import deterministic_delay, no_setting

    def fixed(slot: str) -> bool:
        positional = [a for a in call.args if a.keyword is None and not a.star]
        if slot.startswith("#"):
            index = int(slot[1:])
            value = positional[index].value if index < len(positional) else None
        else:
            value = next((a.value for a in call.args if a.keyword is not None and a.keyword.value == slot), None)
        return value is not None and deterministic_delay(model, value, setting or no_setting)

    return fixed


def literal_number(passed: Passed) -> Callable[[str], bool]:
    """For a call elsewhere in the project: whether a slot holds a number written out."""
    numbers = {slot for slot, _source, literal in passed if literal.replace(".", "", 1).isdigit()}
    return numbers.__contains__
