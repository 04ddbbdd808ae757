"""JUnit XML, for CI systems that show test reports (GitLab, Jenkins, Azure Pipelines).

One `<testsuite name="idemlint">`, one `<testcase>` per checked file (named by its path),
with one `<failure>` per finding in it: a file without findings is a passing test case, so
CI test reports show what was checked, not only what failed. As in the JUnit schema, `tests`
counts test cases and `failures` the test cases that failed (the files with findings).
Called without the checked files, only the files with findings are known.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from idemlint.finding import Finding
from idemlint.output import PLAIN, ReportContext
from idemlint.stakes import at_stake

# Characters XML 1.0 cannot hold, even escaped (control characters other than tab and newlines).
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)


def format_junit(findings: Sequence[Finding], color: bool, context: ReportContext = PLAIN) -> str:
    """A test case per checked file (`context.checked`), failed or passed."""
    by_file: dict[str, list[Finding]] = {path: [] for path in sorted(context.checked)}
    for finding in findings:
        by_file.setdefault(finding.path, []).append(finding)
    tests, failed = str(len(by_file)), str(sum(1 for found in by_file.values() if found))
    suites = ET.Element("testsuites", name="idemlint", tests=tests, failures=failed, errors="0")
    suite = ET.SubElement(suites, "testsuite", name="idemlint", tests=tests, failures=failed, errors="0")
    for path, in_file in by_file.items():
        case = ET.SubElement(suite, "testcase", name=_clean(path), classname="idemlint", file=_clean(path))
        for f in in_file:
            failure = ET.SubElement(case, "failure", message=_clean(f"{f.code} {f.message}"), type=f.code)
            failure.text = _clean(
                f"{f.path}:{f.line}:{f.col}: {f.code} {f.message}{at_stake(f)}\n    help: {f.suggestion}"
            )
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
