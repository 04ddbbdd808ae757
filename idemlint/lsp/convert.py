"""idemlint's findings and rules as protocol objects: diagnostics, ranges, edits, hover text."""

from __future__ import annotations

from lsprotocol import types as lsp

from idemlint import DOCS_URL
from idemlint.finding import Finding
from idemlint.lsp.settings import NAME
from idemlint.lsp.text import LineIndex, units
from idemlint.registry import UNUSED_SUPPRESSION, ReservedCode
from idemlint.rule import Rule

_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning}


def docs_url(code: str, name: str) -> str:
    from idemlint.explain import anchor

    return f"{DOCS_URL}#{anchor(code, name)}"


def to_diagnostic(finding: Finding, index: LineIndex) -> lsp.Diagnostic:
    start = index.from_line_col(finding.line, finding.col)
    end = index.from_line_col(finding.end_line, finding.end_col)
    if end <= start:  # a point (a syntax error's position): one character, so editors can show it
        text = index.line(start[0])
        at = index.offset_of(finding.line, finding.col) - index.starts[start[0]]
        end = (start[0], start[1] + units(text[at : at + 1], index.encoding)) if at < len(text) else start
    return lsp.Diagnostic(
        range=to_range(start, end),
        message=finding.message,
        severity=_SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Information),
        code=finding.code,
        code_description=lsp.CodeDescription(href=docs_url(finding.code, finding.name)),
        source=NAME,
        tags=[lsp.DiagnosticTag.Unnecessary] if finding.code == UNUSED_SUPPRESSION else None,
        data={"fingerprint": finding.fingerprint, "fixable": finding.fix is not None},
    )


def to_range(start: tuple[int, int], end: tuple[int, int]) -> lsp.Range:
    return lsp.Range(start=lsp.Position(*start), end=lsp.Position(*end))


def text_edit(index: LineIndex, start: int, end: int, replacement: str) -> lsp.TextEdit:
    return lsp.TextEdit(range=to_range(index.from_offset(start), index.from_offset(end)), new_text=replacement)


def suppress_action(code: str, diagnostic: lsp.Diagnostic, edit: lsp.WorkspaceEdit | str) -> lsp.CodeAction:
    """ "Suppress CODE on this line": its edit, or disabled with why no comment is safe to write."""
    return lsp.CodeAction(
        title=f"Suppress {code} on this line",
        kind=lsp.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=None if isinstance(edit, str) else edit,
        disabled=lsp.CodeActionDisabled(f"cannot add a noqa comment: {edit}") if isinstance(edit, str) else None,
    )


def hover_markdown(rule: type[Rule] | ReservedCode) -> str:
    """The rule's summary and how to fix it: `idemlint explain`, shortened."""
    return (
        f"**{rule.code}** `{rule.name}` ({rule.severity})\n\n{rule.summary}\n\n"
        f"**How to fix it:** {rule.fix_hint}\n\n"
        f"[Documentation]({docs_url(rule.code, rule.name)}) · `idemlint explain {rule.code}`"
    )
