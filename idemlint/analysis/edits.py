"""Fixes placed by nodes: what an analysis proposes and the engine turns into offsets.

They live below the rules so that analyses (the IDM202 jitter fix, for one) can build them
without importing the rule layer; `idemlint.rule` re-exports them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


@dataclass(frozen=True, eq=False)
class NodeEdit:
    """One text change, placed by a node: the engine turns it into offsets.

    replace: the node's text becomes `text`; delete_line: the lines the node spans go;
    delete_item: the node, an item of a comma-separated list, goes with one adjacent comma
    (or its whole lines, when it has them to itself);
    insert_before: `text` (unindented code) goes above the node's first line, indented
    like it; insert_after: likewise below its last line."""

    kind: str
    node: cst.CSTNode
    text: str = ""
    until: cst.CSTNode | None = None  # replace: up to the start of this node instead of the node's end


@dataclass(frozen=True, eq=False)
class FixPlan:
    edits: tuple[NodeEdit, ...]
    safe: bool
    description: str


__all__ = ["FixPlan", "NodeEdit"]
