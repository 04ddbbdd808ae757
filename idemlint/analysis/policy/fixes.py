"""IDM202's fixes, and where the imports they need go.

`drop_jitter_none` (backoff), `jitter_sleep` (a hand-written loop's sleep) and
`jitter_tenacity_wait` (tenacity's `wait=`) build the unsafe jitter fixes; `ensure_import`
makes `random` or `from tenacity import name` available, placed where isort (and ruff's I
rules) put it, and drops an import the fix leaves unused.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.edits import FixPlan, NodeEdit
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.knowledge.retries import TENACITY

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def drop_jitter_none(jitter: cst.Arg) -> FixPlan:
    """`jitter=None` goes with its comma: backoff's default is full jitter."""
    drop = NodeEdit("delete_item", jitter)
    return FixPlan((drop,), safe=False, description="drop jitter=None (backoff then uses full jitter)")


def jitter_sleep(model: ModuleModel, delay: cst.BaseExpression) -> FixPlan | None:
    """`sleep(d)` -> `sleep(random.uniform(0, d))`: full jitter over the same cap."""
    import_edits = ensure_import(model, "random", None)
    if import_edits is None:
        return None
    code = model.module.code_for_node(delay)
    edits = [NodeEdit("replace", delay, f"random.uniform(0, {code})"), *import_edits]
    return FixPlan(tuple(edits), safe=False, description="sleep a random time up to the same delay (full jitter)")


def jitter_tenacity_wait(model: ModuleModel, wait: cst.BaseExpression) -> FixPlan | None:
    """`wait_fixed(n)` gains `+ wait_random(0, n)`; `wait_exponential(...)` becomes
    `wait_random_exponential(...)` with the same bounds (and its import goes when
    nothing else uses it)."""
    if not isinstance(wait, cst.Call):
        return None
    name = model.call_name(wait) or ""
    module = model.module
    if name.endswith("wait_fixed") and wait.args:
        new, extra = "wait_random", f" + {{name}}(0, {module.code_for_node(wait.args[0].value)})"
    elif name.endswith("wait_exponential"):
        new, extra = "wait_random_exponential", ""
    else:
        return None
    dotted = model.dotted(wait.func) or ""
    if "." in dotted:  # tenacity.wait_fixed(...): the module is imported
        spelled, import_edits = f"{dotted.rsplit('.', 1)[0]}.{new}", []
    else:
        replaced = wait.func if not extra and isinstance(wait.func, cst.Name) else None
        found = ensure_import(model, TENACITY, new, replaced)
        if found is None:
            return None
        spelled, import_edits = new, found
    if extra:
        edits = [NodeEdit("replace", wait, module.code_for_node(wait) + extra.format(name=spelled))]
    else:
        edits = [NodeEdit("replace", wait.func, spelled)]
    return FixPlan((*edits, *import_edits), safe=False, description=f"add jitter with {new}")


def ensure_import(
    model: ModuleModel, module_name: str, name: str | None, replaced: cst.Name | None = None
) -> list[NodeEdit] | None:
    """The edits that make `random` (or `from tenacity import name`) available, placed
    where isort puts them; none when it already is, None when a local name is in the way
    or the module imports nothing at its top level.

    `replaced` is a use of a from-imported name that the fix rewrites: its import goes
    when nothing else uses the name. When something does, the fix still rewrites that
    import statement unchanged, so that fixes which may edit it apply one per round and
    the last one sees that the name is no longer used."""
    local = name or module_name
    wanted = f"{module_name}.{name}" if name else module_name
    present = model.imports.get(local) == wanted
    if not present and (local in model.imports or model.bindings_of(model.module, local)):
        return None
    old = _top_level_import_of(model, replaced.value) if replaced is not None else None
    drop = old is not None and _name_uses(model).get(replaced.value, 0) <= 1  # type: ignore[union-attr]
    target = None
    if name and not present:
        # `from tenacity import ...` statements; isort keeps `import x as y` ones apart
        candidates = [
            (line, line.body[0])
            for line in model.module.body
            if isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and isinstance(line.body[0], cst.ImportFrom)
            and not line.body[0].relative
            and line.body[0].module is not None
            and model.dotted(line.body[0].module) == module_name
            and not isinstance(line.body[0].names, cst.ImportStar)
        ]
        plain = [c for c in candidates if any(a.asname is None for a in c[1].names)]  # type: ignore[union-attr]
        old_here = old is not None and any(c[1] is old[1] for c in candidates)
        if old_here and old[2].asname is None:  # type: ignore[index]
            target = old[0], old[1]  # type: ignore[index]
        elif plain:
            target = plain[0]
        elif old_here and drop:  # `from tenacity import wait_exponential as w` becomes the plain import
            target = old[0], old[1]  # type: ignore[index]
    edits = []
    if old is not None and (target is None or old[1] is not target[1]):
        edits.extend(_edit_from_import(model, old[0], old[1], None, old[2] if drop else None))
    if target is not None:
        remove = old[2] if drop and old is not None and old[1] is target[1] else None
        edits.extend(_edit_from_import(model, target[0], target[1], name, remove))
    elif not present:
        block = _import_block(model)
        if not block:
            return None
        code = f"from {module_name} import {name}\n" if name else f"import {module_name}\n"
        edits.append(_insert_import(model, block, code, _stdlib_or_other(module_name), (name is not None, module_name)))
    return edits


def _import_block(model: ModuleModel) -> list[cst.SimpleStatementLine]:
    """The first run of import statements at the module's top level (its docstring may
    come before): the block isort sorts, and where a fix's import goes."""
    block: list[cst.SimpleStatementLine] = []
    for line in model.module.body:
        if (
            isinstance(line, cst.SimpleStatementLine)
            and len(line.body) == 1
            and isinstance(line.body[0], (cst.Import, cst.ImportFrom))
        ):
            block.append(line)
        elif block:
            break
    return block


def _top_level_import_of(
    model: ModuleModel, local: str
) -> tuple[cst.SimpleStatementLine, cst.ImportFrom, cst.ImportAlias] | None:
    """The top-level `from ... import` that binds `local`, and its alias."""
    for line in model.module.body:
        if not isinstance(line, cst.SimpleStatementLine):
            continue
        for statement in line.body:
            if isinstance(statement, cst.ImportFrom) and not isinstance(statement.names, cst.ImportStar):
                for alias in statement.names:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(bound, cst.Name) and bound.value == local:
                        return (line, statement, alias) if len(line.body) == 1 else None
    return None


def _name_uses(model: ModuleModel) -> dict[str, int]:
    """How often each name is read (or bound other than by an import) in the module,
    strings equal to it counted too (`__all__`): a name with no use is an unused import."""
    uses: dict[str, int] | None = model.memo.get("policy.name_uses")
    if uses is None:
        uses = {}
        parents = model.parents
        for node in model.iter_nodes(model.module, stop_at_functions=False):
            if not isinstance(node, cst.Name):
                continue
            parent = parents.get(node)
            if (
                isinstance(parent, (cst.ImportAlias, cst.AsName, cst.ImportFrom))
                or (isinstance(parent, cst.Attribute) and parent.attr is node)
                or (isinstance(parent, cst.Arg) and parent.keyword is node)
            ):
                continue
            uses[node.value] = uses.get(node.value, 0) + 1
        for string in model.strings:
            value = string_value(string)
            if value is not None:
                uses[value] = uses.get(value, 0) + 1
        model.memo["policy.name_uses"] = uses
    return uses


def _edit_from_import(
    model: ModuleModel,
    line: cst.SimpleStatementLine,
    statement: cst.ImportFrom,
    add: str | None,
    drop: cst.ImportAlias | None,
) -> list[NodeEdit]:
    """`from m import ...` with `add` among its names in isort's order and `drop` gone
    (the whole line when nothing is left), written in the statement's own layout; a
    single line that grows past 88 characters is wrapped one name a line as isort does,
    a comment at its end moving up behind the `(`."""
    module = model.module
    if add is None and drop is None:  # unchanged: only claims the statement for this round
        return [NodeEdit("replace", statement, module.code_for_node(statement))]
    aliases = list(statement.names)  # type: ignore[arg-type]
    if drop is not None:
        index = next(i for i, alias in enumerate(aliases) if alias is drop)
        del aliases[index]
        if not aliases and add is None:
            return [NodeEdit("delete_line", line)]
        if aliases and index == len(aliases):  # the last name went: the one before takes its comma
            aliases[-1] = aliases[-1].with_changes(comma=_merge_commas(aliases[-1].comma, drop.comma))
    if add is not None:
        aliases = _insert_alias(statement, aliases, add)
    new = statement.with_changes(names=aliases)
    code = module.code_for_node(new)
    trailing = line.trailing_whitespace
    comment = trailing.comment.value if trailing.comment else ""
    if "\n" in code or statement.lpar is not None or len(code) + len(trailing.whitespace.value) + len(comment) <= 88:
        return [NodeEdit("replace", statement, code)]
    if not comment:
        return [NodeEdit("replace", statement, module.code_for_node(_wrapped(new)))]
    wrapped = _wrapped(new, cst.TrailingWhitespace(cst.SimpleWhitespace("  "), trailing.comment))
    code = module.code_for_node(
        line.with_changes(body=[wrapped], leading_lines=(), trailing_whitespace=cst.TrailingWhitespace())
    )
    return [NodeEdit("delete_line", line), NodeEdit("insert_before", line, code)]


def _insert_import(
    model: ModuleModel, block: list[cst.SimpleStatementLine], code: str, section: int, key: tuple[bool, str]
) -> NodeEdit:
    """`code` (one import statement) into the import block where isort puts it: in sorted
    order in the first group of its section (plain imports before `from` imports), else
    as a group of its own after the groups of the sections before it."""
    sections = [_import_section(line.body[0]) for line in block]  # type: ignore[arg-type]
    groups = [0]
    for line in block[1:]:
        groups.append(groups[-1] + _starts_group(line))
    same = [i for i, s in enumerate(sections) if s == section]
    if same:
        members = [i for i in same if groups[i] == groups[same[0]]]
        sort_key = (key[0], _natural(key[1].lower()), key[1])
        before = [i for i in members if _import_sort_key(block[i].body[0]) <= sort_key]  # type: ignore[arg-type]
        if before:
            return NodeEdit("insert_after", block[before[-1]], code)
        return NodeEdit("insert_before", block[members[0]], code)
    earlier = [i for i, s in enumerate(sections) if s < section]
    if not earlier:
        return NodeEdit("insert_before", block[0], code + "\n")
    last = earlier[-1]
    apart = last + 1 == len(block) or _starts_group(block[last + 1])
    return NodeEdit("insert_after", block[last], "\n" + code + ("" if apart else "\n"))


# -- import layout for fixes, as isort (and ruff's I rules) lay imports out -----------------------


def _import_section(statement: cst.Import | cst.ImportFrom) -> int:
    """0 for `from __future__`, 1 for the standard library, 2 for other absolute imports
    (third-party and first-party: which is which needs the project layout), 3 for relative."""
    if isinstance(statement, cst.ImportFrom):
        if statement.relative:
            return 3
        if statement.module is None:
            return 2
        name = _dotted_code(statement.module)
        if name == "__future__":
            return 0
    else:
        name = _dotted_code(statement.names[0].name)
    return _stdlib_or_other(name)


def _stdlib_or_other(module_name: str) -> int:
    import sys

    return 1 if module_name.partition(".")[0] in sys.stdlib_module_names else 2


def _dotted_code(expr: cst.BaseExpression) -> str:
    if isinstance(expr, cst.Attribute):
        return f"{_dotted_code(expr.value)}.{expr.attr.value}"
    return expr.value if isinstance(expr, cst.Name) else ""


def _import_sort_key(statement: cst.Import | cst.ImportFrom) -> tuple[bool, list[int | str], str]:
    """isort's order inside a section: plain imports first, then by module name, ignoring
    case and reading digits as numbers."""
    if isinstance(statement, cst.ImportFrom):
        name = "." * len(statement.relative) + (_dotted_code(statement.module) if statement.module else "")
    else:
        name = _dotted_code(statement.names[0].name)
    return (isinstance(statement, cst.ImportFrom), _natural(name.lower()), name)


def _member_sort_key(name: str) -> tuple[int, list[int | str], list[int | str]]:
    """isort's order of the names in `from m import ...`: CONSTANTS, Classes, then the rest."""
    kind = 0 if len(name) > 1 and name.isupper() else 1 if name[:1].isupper() else 2
    return (kind, _natural(name.lower()), _natural(name))


def _natural(text: str) -> list[int | str]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def _starts_group(line: cst.SimpleStatementLine) -> bool:
    """Whether a blank line separates this import from the one before it."""
    return any(empty.comment is None for empty in line.leading_lines)


def _insert_alias(statement: cst.ImportFrom, aliases: list[cst.ImportAlias], name: str) -> list[cst.ImportAlias]:
    """`aliases` with `name` added in sorted place, laid out like its neighbours: on a line of
    its own in an import written one name a line, else after `, `."""
    key = _member_sort_key(name)
    index = next((i for i, a in enumerate(aliases) if _member_sort_key(_dotted_code(a.name)) > key), len(aliases))
    layouts = [a.comma.whitespace_after for a in aliases[:-1] if isinstance(a.comma, cst.Comma)]
    if statement.lpar is not None:
        layouts.insert(0, statement.lpar.whitespace_after)
    own_line = next((w for w in layouts if isinstance(w, cst.ParenthesizedWhitespace)), None)
    if own_line is not None:
        between = cst.Comma(whitespace_after=own_line.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=()))
    else:
        between = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
    added = cst.ImportAlias(name=cst.Name(name), comma=between)
    if not aliases:
        return [added.with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    if index < len(aliases):
        return [*aliases[:index], added, *aliases[index:]]
    last = aliases[-1]  # the new name goes last and takes the last one's comma (trailing or none)
    return [
        *aliases[:-1],
        last.with_changes(comma=_merge_commas(last.comma, between)),
        added.with_changes(comma=_without_comment(last.comma)),
    ]


def _merge_commas(
    kept: cst.Comma | cst.MaybeSentinel, following: cst.Comma | cst.MaybeSentinel
) -> cst.Comma | cst.MaybeSentinel:
    """The comma for an item that now ends where another one did: `following`, keeping the
    comment after `kept` when both end their lines."""
    if (
        isinstance(kept, cst.Comma)
        and isinstance(following, cst.Comma)
        and isinstance(kept.whitespace_after, cst.ParenthesizedWhitespace)
        and isinstance(following.whitespace_after, cst.ParenthesizedWhitespace)
    ):
        return following.with_changes(
            whitespace_after=following.whitespace_after.with_changes(first_line=kept.whitespace_after.first_line)
        )
    return following


def _without_comment(comma: cst.Comma | cst.MaybeSentinel) -> cst.Comma | cst.MaybeSentinel:
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        return comma.with_changes(
            whitespace_after=comma.whitespace_after.with_changes(first_line=cst.TrailingWhitespace())
        )
    return comma


def _wrapped(statement: cst.ImportFrom, first_line: cst.TrailingWhitespace | None = None) -> cst.ImportFrom:
    """`from m import (` with one name a line and a trailing comma, then `)`."""
    aliases = list(statement.names)  # type: ignore[arg-type]

    def line_break(indent: str, first: cst.TrailingWhitespace | None = None) -> cst.ParenthesizedWhitespace:
        return cst.ParenthesizedWhitespace(
            first_line=first or cst.TrailingWhitespace(), last_line=cst.SimpleWhitespace(indent)
        )

    names = [
        alias.with_changes(comma=cst.Comma(whitespace_after=line_break("" if i == len(aliases) - 1 else "    ")))
        for i, alias in enumerate(aliases)
    ]
    return statement.with_changes(
        names=names, lpar=cst.LeftParen(whitespace_after=line_break("    ", first_line)), rpar=cst.RightParen()
    )
