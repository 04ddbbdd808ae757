from __future__ import annotations

import json
from collections.abc import Sequence

from idemlint.finding import Finding


def format_json(findings: Sequence[Finding], color: bool) -> str:
    return json.dumps([f.to_dict() for f in findings], indent=2, ensure_ascii=False) + "\n"
