"""What a finding puts at stake, apart from how sure idemlint is of it.

Most true findings are minor: a status flip on an admin toggle, a retry loop without jitter.
A few cost money or reach another system: a charge made twice, a refund row written twice,
a message sent again. `stakes` tells the two apart, so a team can look at what matters first
(`--min-stakes`, and the text report lists the highest stakes first):

- `external`: money or an effect in another system: a charge, refund, payout, message or
  fulfilment, or a write to a record of one;
- `state`: a state the system keeps: a status flip, a counter, a row;
- `none`: no duplicate effect and no wrong state; the cost is load or latency.

Each rule declares its base stakes. A rule whose finding is about a write or a retried
operation (`Rule.stakes_follow_effects`) rises to `external` where the function it is in calls
another system (directly, or through a project function's summary), or where what it writes
is named for money or a message (MONEY_AND_MESSAGE_WORDS).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.context import FileContext
    from idemlint.finding import Finding
    from idemlint.rule import Report, Rule

EXTERNAL = "external"
STATE = "state"
NONE = "none"
STAKES_RANK = {NONE: 0, STATE: 1, EXTERNAL: 2}
DESCRIBED = {
    EXTERNAL: "money or an external effect",
    STATE: "stored state",
    NONE: "load or latency only",
}

# Words of a record, state or column whose duplicate or backward write costs money or repeats
# a message: `payment.status = "refunded"`, `Payout.objects.filter(...)`, `mail.state = SENT`.
MONEY_AND_MESSAGE_WORDS = frozenset(
    {
        "balance",
        "capture",
        "captured",
        "charge",
        "charged",
        "credit",
        "debit",
        "donation",
        "email",
        "fulfil",
        "fulfill",
        "fulfilled",
        "fulfillment",
        "fulfilment",
        "invoice",
        "ledger",
        "mail",
        "message",
        "notification",
        "order",
        "paid",
        "payin",
        "payment",
        "payout",
        "purchase",
        "refund",
        "refunded",
        "sent",
        "settled",
        "shipment",
        "shipped",
        "sms",
        "subscription",
        "transfer",
        "wallet",
    }
)
_WORD = re.compile(r"[a-z]+")


def _words(text: str) -> set[str]:
    """The lower-case words of identifiers and literals: `order_status`, `OrderStatus.PAID`,
    `"refunded"` give order, status, paid, refunded (a trailing plural `s` dropped)."""
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text).lower()
    return {word[:-1] if word.endswith("s") and len(word) > 3 else word for word in _WORD.findall(spaced)}


def names_money_or_message(texts: Iterable[str]) -> bool:
    return any(not MONEY_AND_MESSAGE_WORDS.isdisjoint(_words(text)) for text in texts)


def at_stake(finding: Finding) -> str:
    """` (high confidence, read in the function; at stake: stored state)`, for the formats with one
    message per finding (GitHub, GitLab, JUnit); "" for a finding idemlint reports about itself."""
    if not finding.stakes:
        return ""
    how = f", {finding.evidence}" if finding.evidence else ""
    return f" ({finding.confidence} confidence{how}; at stake: {DESCRIBED[finding.stakes]})"


def at_least(stakes: str, floor: str) -> bool:
    """Whether `stakes` reach `floor`; a finding idemlint reports about itself (no stakes) always does."""
    return not stakes or STAKES_RANK.get(stakes, 0) >= STAKES_RANK[floor]


def of_report(ctx: FileContext, rule: type[Rule], report: Report, written: Iterable[str]) -> str:
    """The stakes of one finding: the rule's own, raised to `external` for a rule that follows
    effects when `written` (the reported lines and the chain's steps) names money or a message,
    or when the function the finding is in calls another system."""
    if rule.stakes == EXTERNAL or not rule.stakes_follow_effects:
        return rule.stakes
    if names_money_or_message(written) or _calls_another_system(ctx, report.node):
        return EXTERNAL
    return rule.stakes


def _calls_another_system(ctx: FileContext, node: cst.CSTNode) -> bool:
    """Whether the innermost function around `node` makes an external call, itself or through
    the functions it calls (their summaries' `effect`)."""
    function = ctx.model.enclosing_function(node)
    if function is None:
        return False
    summary = ctx.summaries.by_function.get(function)
    if summary is not None and summary.effect is not None:
        return True
    return any(function in ctx.model.ancestors(effect.call) for effect in ctx.effects.effects)
