"""Hover: the rule's summary and how to fix it, on a finding or on a code in a `# noqa` comment."""

from __future__ import annotations

from lsprotocol import types as lsp

from idemlint.lsp.checker import Analysis
from idemlint.lsp.convert import hover_markdown
from idemlint.lsp.text import code_at
from idemlint.registry import rule_by_code_or_name


def hover_at(analysis: Analysis, position: lsp.Position) -> lsp.Hover | None:
    """The hover at a protocol position of the analysed document, or None: nothing to say."""
    index = analysis.index
    line = position.line
    offset = index.to_offset(line, position.character)
    if 0 <= line < index.line_count:
        code = code_at(index.line(line), offset - index.starts[line])
        rule = rule_by_code_or_name(code) if code else None
        if rule is not None:
            return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=hover_markdown(rule)))
    parts: list[str] = []
    covered: lsp.Range | None = None
    for finding, diagnostic in zip(analysis.findings, analysis.diagnostics, strict=True):
        start, end = analysis.span(finding)
        if not start <= offset <= end or any(f"**{finding.code}**" in part for part in parts):
            continue
        rule = rule_by_code_or_name(finding.code)
        if rule is not None:
            parts.append(hover_markdown(rule))
            covered = covered or diagnostic.range
    if not parts:
        return None
    markdown = "\n\n---\n\n".join(parts)
    return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown), range=covered)
