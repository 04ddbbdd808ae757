"""Functions that add to a column of the row they are given, or of their own, and save it
(`def add_credits(self, n): self.credits += n; self.save()`): what they build on is what the
caller loaded, so a caller that loaded the row without a lock loses one of two overlapping
runs' changes at the call (IDM101's lost update, `analysis/db/lost_updates.py`). The summaries
carry them (`builds_on`) across modules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.chains import locks
from idemlint.analysis.db.lost_updates import built_columns, saves_the_column
from idemlint.analysis.db.races import loads_again

if TYPE_CHECKING:
    from collections.abc import Callable

    import libcst as cst

    from idemlint.analysis.db.classify import DbAnalysis
    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.summary_records import Chain
else:
    cst = LazyModule("libcst", globals(), "cst")


def built_writes(
    model: ModuleModel, db: Callable[[], DbAnalysis]
) -> dict[cst.CSTNode, tuple[tuple[str, ...], Chain, str]]:
    """Functions that write columns of their own instance (or of the one they are given) as a
    sum with the old value and store them, outside any loop of theirs (not a tally of the run's
    work): `def add_credits(self, n): self.credits += n; self.save()`. What they build on is
    what the caller loaded: {function: (columns, chain, "self" or the parameter)}."""
    from idemlint.analysis.direct_facts import owned_instance
    from idemlint.analysis.summary_records import Step

    if not any(type(target.value) is cst.Name for target, _v, _s in model.attribute_assigns):
        return {}
    found: dict[cst.CSTNode, tuple[tuple[str, ...], Chain, str]] = {}
    for write in db().writes:
        scope = model.scope_of(write.node)
        if write.kind != "attribute" or write.instance is None or scope in found or type(scope) is not cst.FunctionDef:
            continue
        if (
            not owned_instance(model, scope, write.instance)
            or any(isinstance(a, (cst.For, cst.While)) for a in model.ancestors(write.node, until=scope))
            or _reads_again(model, scope, write.instance)
        ):
            continue
        columns = tuple(c for c in built_columns(model, write) if saves_the_column(model, write, c, scope))
        if columns:
            found[scope] = (
                columns,
                (Step(f"{write.instance}.{columns[0]} builds on its old value", write.node),),
                write.instance,
            )
    return found


def _reads_again(model: ModuleModel, scope: cst.CSTNode, instance: str) -> bool:
    """The function loads the instance again (`self.refresh_from_db()`) or takes a row lock
    (`select_for_update()`) before its sum: it builds on a value it took itself."""
    return any(
        type(node) is cst.Call and (loads_again(model, node, instance) or locks([node]))
        for node in model.iter_nodes(scope)
    )
