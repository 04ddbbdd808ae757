"""SARIF 2.1.0, as GitHub code scanning reads it: rules with help, relative URIs, fingerprints."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from idemlint import DOCS_URL, __version__
from idemlint.finding import Finding

_LEVEL = {"error": "error", "warning": "warning"}
_PRECISION = {"high": "high", "medium": "medium", "low": "low"}


def _rules() -> list[dict[str, object]]:
    from idemlint.explain import render
    from idemlint.registry import RESERVED
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
                "helpUri": f"{DOCS_URL}#{rule.code.lower()}-{rule.name}",
                "defaultConfiguration": {"level": _LEVEL[rule.severity]},
                "properties": {"precision": _PRECISION[rule.confidence], "tags": ["idempotency", "reliability"]},
            }
        )
    for code, (name, summary) in sorted(RESERVED.items()):
        rules.append(
            {
                "id": code,
                "name": name,
                "shortDescription": {"text": summary},
                "fullDescription": {"text": summary},
                "help": {"text": summary, "markdown": summary},
                "helpUri": f"{DOCS_URL}#{code.lower()}",
                "defaultConfiguration": {"level": "warning"},
            }
        )
    return rules


def _location(finding: Finding) -> dict[str, object]:
    artifact: dict[str, object]
    if Path(finding.path).is_absolute():
        artifact = {"uri": Path(finding.path).as_uri()}
    else:
        artifact = {"uri": finding.path, "uriBaseId": "%SRCROOT%"}
    return {
        "physicalLocation": {
            "artifactLocation": artifact,
            "region": {
                "startLine": finding.line,
                "startColumn": finding.col,
                "endLine": max(finding.end_line, finding.line),
                "endColumn": max(finding.end_col, 1),
            },
        }
    }


def format_sarif(findings: Sequence[Finding], color: bool) -> str:
    rules = _rules()
    index = {rule["id"]: i for i, rule in enumerate(rules)}
    results = []
    for finding in findings:
        results.append(
            {
                "ruleId": finding.code,
                "ruleIndex": index[finding.code],
                "level": _LEVEL.get(finding.severity, "warning"),
                "message": {"text": f"{finding.message}. {finding.suggestion}"},
                "locations": [_location(finding)],
                "partialFingerprints": {"primaryLocationLineHash": finding.fingerprint or "0"},
            }
        )
    log = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {"name": "idemlint", "version": __version__, "informationUri": DOCS_URL, "rules": rules}
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": Path.cwd().as_uri() + "/"}},
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"
