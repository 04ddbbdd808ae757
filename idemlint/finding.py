"""Plain-data results: no CST nodes, so findings pickle across worker processes."""

from __future__ import annotations

from dataclasses import dataclass, field

from idemlint.printable import printable


def _printable_fields(instance: object, *names: str) -> None:
    """Escape what a hostile repository could put in these text fields (see printable.py)."""
    for name in names:
        text = getattr(instance, name)
        safe = printable(text)
        if safe is not text:
            object.__setattr__(instance, name, safe)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace the text between two 0-based offsets of the file's source."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True, slots=True)
class Fix:
    edits: tuple[Edit, ...]
    safe: bool
    description: str

    def __post_init__(self) -> None:
        _printable_fields(self, "description")


@dataclass(frozen=True, slots=True)
class Related:
    """A place a reader follows from a finding to its cause (a helper, the key it makes)."""

    path: str
    line: int
    message: str

    def __post_init__(self) -> None:
        _printable_fields(self, "path", "message")


@dataclass(frozen=True, slots=True, order=True)
class Finding:
    """One reported problem. Lines and columns are 1-based, as editors count them."""

    path: str
    line: int
    col: int
    code: str
    end_line: int = field(compare=False)
    end_col: int = field(compare=False)
    name: str = field(compare=False)
    message: str = field(compare=False)
    suggestion: str = field(compare=False)
    fix: Fix | None = field(default=None, compare=False)
    severity: str = field(default="error", compare=False)
    confidence: str = field(default="high", compare=False)
    # Stable across unrelated edits: code, path, the finding's normalised source line and
    # enclosing function, not the line number (baselines and SARIF fingerprints use it).
    fingerprint: str = field(default="", compare=False)
    related: tuple[Related, ...] = field(default=(), compare=False)
    # how the finding was reached ("in the function", "through a project function", "on an
    # instance a caller loaded"...) and what the file is ("source", "script", "example"...):
    # together with the code, what its confidence is measured for (idemlint.calibration)
    evidence: str = field(default="", compare=False)
    role: str = field(default="", compare=False)
    # what it puts at stake: external, state or none (idemlint.stakes); "" for idemlint's own
    stakes: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        _printable_fields(self, "path", "name", "message", "suggestion")

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "column": self.col,
            "end_line": self.end_line,
            "end_column": self.end_col,
            "code": self.code,
            "name": self.name,
            "message": self.message,
            "suggestion": self.suggestion,
            "severity": self.severity,
            "confidence": self.confidence,
            "fingerprint": self.fingerprint,
            "fix_available": self.fix is not None,
            "related": [{"path": r.path, "line": r.line, "message": r.message} for r in self.related],
            "evidence": self.evidence,
            "role": self.role,
            "stakes": self.stakes,
        }
