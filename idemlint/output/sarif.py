"""SARIF 2.1.0, as GitHub code scanning reads it: rules with help, relative URIs, fingerprints."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from idemlint import DOCS_URL, __version__
from idemlint.calibration import measured_level
from idemlint.finding import Finding
from idemlint.output import PLAIN, ReportContext
from idemlint.output.fingerprints import occurrence_fingerprints

_LEVEL = {"error": "error", "warning": "warning"}


def _rules() -> list[dict[str, object]]:
    from idemlint.explain import anchor, render
    from idemlint.registry import RESERVED_CODES
    from idemlint.rules import ALL_RULES

    rules: list[dict[str, object]] = []
    for rule in ALL_RULES:
        rules.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.what_it_does},
                "help": {"text": f"{rule.why}\n\nFix: {rule.fix_hint}", "markdown": render(rule)},
                "helpUri": f"{DOCS_URL}#{anchor(rule.code, rule.name)}",
                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
                "properties": {"precision": measured_level(rule), "tags": ["idempotency", "reliability"]},
            }
        )
    for code in sorted(RESERVED_CODES):
        doc = RESERVED_CODES[code]
        rules.append(
            {
                "id": code,
                "name": doc.name,
                "shortDescription": {"text": doc.summary},
                "fullDescription": {"text": doc.what_it_does},
                "help": {"text": f"{doc.why}\n\nFix: {doc.fix_hint}", "markdown": render(doc)},
                "helpUri": f"{DOCS_URL}#{anchor(code, doc.name)}",
                "defaultConfiguration": {"level": _LEVEL[doc.severity]},
                "properties": {"tags": ["idempotency", "reliability"]},
            }
        )
    return rules


def _location(path: str, line: int, col: int = 0, end_line: int = 0, end_col: int = 0) -> dict[str, object]:
    artifact: dict[str, object]
    if Path(path).is_absolute():
        artifact = {"uri": Path(path).as_uri()}
    else:
        artifact = {"uri": path, "uriBaseId": "%SRCROOT%"}
    region: dict[str, int] = {"startLine": max(line, 1)}
    if col:
        region.update(startColumn=col, endLine=max(end_line, line), endColumn=max(end_col, 1))
    return {"physicalLocation": {"artifactLocation": artifact, "region": region}}


def format_sarif(findings: Sequence[Finding], color: bool, context: ReportContext = PLAIN) -> str:
    """Paths relative to `context.root` (the project root; default the cwd)."""
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for finding, line_hash in zip(findings, occurrence_fingerprints(findings), strict=True):
        result: dict[str, object] = {
            "ruleId": finding.code,
            "ruleIndex": index[finding.code],
            "level": _LEVEL.get(finding.severity, "warning"),
            "message": {"text": f"{finding.message}. {finding.suggestion}"},
            "locations": [_location(finding.path, finding.line, finding.col, finding.end_line, finding.end_col)],
            "partialFingerprints": {"primaryLocationLineHash": line_hash},
        }
        if finding.evidence:  # what its confidence is measured for (idemlint.calibration)
            result["properties"] = {
                "confidence": finding.confidence,
                "evidence": finding.evidence,
                "role": finding.role,
                "stakes": finding.stakes,
            }
        if finding.related:  # the chain from the finding to its cause, in another function or file
            result["relatedLocations"] = [
                {**_location(r.path, r.line), "id": number, "message": {"text": r.message}}
                for number, r in enumerate(finding.related)
            ]
        results.append(result)
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": "idemlint", "version": __version__, "informationUri": DOCS_URL, "rules": rules}
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": (context.root or Path.cwd()).resolve().as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
