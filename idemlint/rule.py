"""The rule base class: one small class holds a rule's code, texts, examples and check.

Its documentation (`idemlint explain`, docs/rules.md) and its example tests come from the
same fields, so they cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from idemlint.analysis.edits import FixPlan, NodeEdit

__all__ = ["FixPlan", "NodeEdit", "Report", "Rule"]  # FixPlan, NodeEdit: re-exported for rules

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.project_index import ProjectIndex
    from idemlint.analysis.summaries import Step
    from idemlint.config import Config
    from idemlint.context import FileContext


@dataclass(frozen=True, eq=False)
class Report:
    """What a rule says about one node; the engine turns it into a Finding."""

    node: cst.CSTNode
    message: str  # may name other nodes' lines as ${name}, filled from `lines`
    suggestion: str | None = None
    fix: FixPlan | None = None
    lines: tuple[tuple[str, cst.CSTNode], ...] = ()
    # Lower than the rule's own when this finding is less sure or of less harm (an instance
    # a caller may have locked, a failure status written on an error path): `--min-confidence`
    # then keeps the findings a reviewer must see.
    confidence: str | None = None
    # Where a reader follows the finding to its cause (the helper in another module, the
    # key it makes): SARIF relatedLocations, JSON `related`, a `via` line in text.
    related: tuple[Step, ...] = ()
    # How the rule reached it, when it knows more than "in the function" or "through a project
    # function" (the engine's default): part of what its confidence is measured for
    evidence: str | None = None


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]  # kebab-case, names the pattern: "key-regenerated-per-attempt"
    summary: ClassVar[str]  # one line for `idemlint rules`
    what_it_does: ClassVar[str]
    why: ClassVar[str]  # why retries or duplicate delivery make it a bug
    fix_hint: ClassVar[str]  # the suggestion printed under each finding
    bad: ClassVar[str]
    good: ClassVar[str]
    known_problems: ClassVar[str] = ""
    how_to_fix: ClassVar[tuple[tuple[str, str], ...]] = ()  # (library, advice)
    fix_safety: ClassVar[str] = "No automatic fix: the repair needs knowledge only the author has."
    severity: ClassVar[str] = "error"  # error | warning
    confidence: ClassVar[str] = "high"  # high | medium | low
    # What a finding puts at stake (idemlint.stakes): external | state | none; a rule about a
    # write or a retried operation rises to external where the function calls another system.
    stakes: ClassVar[str] = "state"
    stakes_follow_effects: ClassVar[bool] = False
    # Pre-filter, in conjunctive normal form over the lower-cased source: every group
    # must have one of its words in the file, or the rule cannot fire there.
    triggers: ClassVar[tuple[tuple[str, ...], ...]] = ()
    # Migrations run once, by hand: rules about concurrent deliveries skip them by default.
    skips_migrations: ClassVar[bool] = False
    # Reads the project index (idemlint.analysis.project): the runner builds it only when needed.
    needs_project: ClassVar[bool] = False
    # Trigger groups (by position) that a call to a project function with one of these
    # summary facts satisfies too: a file that calls `client.post(...)`, where `post` makes a
    # key, needs no key-making word of its own.
    project_facts: ClassVar[tuple[str, ...]] = ()
    project_groups: ClassVar[frozenset[int]] = frozenset()

    def check(self, ctx: FileContext) -> Iterator[Report]:
        raise NotImplementedError

    @classmethod
    def trigger_groups(cls, config: Config) -> tuple[tuple[str, ...], ...]:
        return cls.triggers

    @classmethod
    def wanted(cls, lowered_source: str, config: Config, project: ProjectIndex | None = None) -> bool:
        contains = lowered_source.__contains__  # `map` over it: no Python frame per word
        names: list[str] | None = None
        for index, group in enumerate(cls.trigger_groups(config)):
            if any(map(contains, group)):
                continue
            if project is None or index not in cls.project_groups:
                return False
            if names is None:
                names = [name for fact in cls.project_facts for name in project.names_with.get(fact, ())]
            if not any(_called(name, lowered_source) for name in filter(contains, names)):
                return False
        return True


def _called(word: str, lowered_source: str) -> bool:
    """Whether a call word (`name(`, `name as `), which occurs in the source, occurs other than
    as its own definition (`def name(`): a module that only defines a method of the same name
    as a project function calls nothing by it."""
    return lowered_source.count(word) > lowered_source.count("def " + word)
