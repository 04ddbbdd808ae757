"""How `idemlint audit` prints its rows: a summary by library and target, then one row per
call site, as text, JSON or Markdown (cells escaped: a repository's text cannot break the
table or inject markup)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict
from urllib.parse import urlsplit

from idemlint.audit import AuditRow


def target_base(target: str) -> str:
    if "://" in target:
        parts = urlsplit(target)
        return f"{parts.scheme}://{parts.netloc}"
    return target.split("/")[0] if target.startswith("{") or "/" in target else target


def summary(rows: Sequence[AuditRow]) -> list[dict[str, object]]:
    groups: dict[tuple[str, str], dict[str, object]] = {}
    for row in rows:
        # an in-house row's target is the external call its wrapper reaches: kept whole
        key = (row.library, row.target if row.library == "in-house" else target_base(row.target))
        group = groups.setdefault(
            key,
            {"library": key[0], "target": key[1], "sites": 0, "unkeyed": 0, "bad_key": 0, "unsafe_and_retried": 0},
        )
        group["sites"] += 1  # type: ignore[operator]
        group["unkeyed"] += row.unkeyed  # type: ignore[operator]
        group["bad_key"] += row.bad_key  # type: ignore[operator]
        group["unsafe_and_retried"] += row.unsafe and row.retried is not None  # type: ignore[operator]
    return sorted(
        groups.values(),
        key=lambda g: (-g["unsafe_and_retried"], -g["unkeyed"] - g["bad_key"], g["library"], g["target"]),  # type: ignore[operator]
    )


COLUMNS = ("location", "library", "call", "target", "key", "retried", "timeout")


def _cells(row: AuditRow) -> tuple[str, ...]:
    call = f"{row.method} {row.call}" if row.method else row.call
    retried = str(row.retried) if row.retried is not None else "no"
    return (f"{row.path}:{row.line}", row.library, call, row.target, str(row.key), retried, str(row.timeout))


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>|~&!#])")


def _markdown_text(cell: str) -> str:
    """A cell's text with nothing Markdown or HTML would read as markup (job summaries and pull
    request comments render the report)."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", cell)


def _markdown_code(cell: str) -> str:
    """A cell's text as a code span (a URL or call from the code: no link, no markup); GitHub
    tables still split on `|`, so it is escaped inside too."""
    fence = "`" * (max((len(run) for run in re.findall("`+", cell)), default=0) + 1)
    return f"{fence} {cell.replace('|', chr(92) + '|')} {fence}"


def format_markdown(rows: Sequence[AuditRow]) -> str:
    escape = _markdown_text
    lines = [
        "# External side effects",
        "",
        "Unkeyed: no idempotency key seen. Bad key: a key a retry cannot reuse (regenerated per attempt, "
        "clock- or hash-derived). Unsafe and retried: either, and something retries the call.",
        "",
        "| library | target | sites | unkeyed | bad key | unsafe and retried |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for group in summary(rows):
        lines.append(
            f"| {escape(str(group['library']))} | {_markdown_code(str(group['target']))} | {group['sites']} "
            f"| {group['unkeyed']} | {group['bad_key']} | {group['unsafe_and_retried']} |"
        )
    lines += ["", "| " + " | ".join(COLUMNS) + " |", "| " + " | ".join("---" for _ in COLUMNS) + " |"]
    code_cells = {COLUMNS.index("call"), COLUMNS.index("target")}
    lines += [
        "| " + " | ".join(_markdown_code(c) if i in code_cells else escape(c) for i, c in enumerate(_cells(row))) + " |"
        for row in rows
    ]
    return "\n".join(lines) + "\n"


def format_json(rows: Sequence[AuditRow]) -> str:
    """Fields, not prose: `key` {status, rule, detail}, `retried` {kind, line, note} or null when
    nothing retries the call, `timeout` {handling, rule, detail}; absent values are null."""
    return json.dumps({"summary": summary(rows), "sites": [asdict(r) for r in rows]}, indent=2) + "\n"


def format_text(rows: Sequence[AuditRow], color: bool) -> str:
    bold, red, reset = ("\x1b[1m", "\x1b[31m", "\x1b[0m") if color else ("", "", "")
    out = [f"{bold}External side effects by library and target{reset}"]
    for group in summary(rows):
        risky = group["unsafe_and_retried"]
        mark = f"{red}{risky} unsafe and retried{reset}" if risky else "0 unsafe and retried"
        sites = f"{group['sites']:>3} site{'s' * (group['sites'] != 1)},"
        out.append(
            f"  {group['library']:<10} {str(group['target'])[:50]:<50} {sites:<10} {group['unkeyed']} unkeyed, "
            f"{group['bad_key']} bad key, {mark}"
        )
    out.append("")
    for row in rows:
        location, library, call, target, key, retried, timeout = _cells(row)
        highlight = red if row.unsafe and row.retried is not None else ""
        out.append(f"{bold}{location}{reset}  {call}  ->  {target}")
        out.append(f"    key: {highlight}{key}{reset if highlight else ''}; retried: {retried}; timeout: {timeout}")
    return "\n".join(out) + "\n"


FORMATS = {"text": format_text, "json": format_json, "markdown": format_markdown}
