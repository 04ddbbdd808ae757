"""Read bytes, parse once, run every selected rule on the shared analysis, report.

Each file is independent and its result is plain data, so files can be checked in
worker processes and cached. Nothing here raises for a bad file: a file that cannot be
decoded or parsed becomes one IDM900 finding, and a rule that crashes is switched off
for that file and recorded as an internal error while the other rules' findings stand.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import re
import signal
import sys
import threading
import tokenize
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from string import Template
from typing import TYPE_CHECKING, TypeVar

from idemlint.analysis.project import EMPTY, ProjectIndex
from idemlint.config import Config
from idemlint.finding import Edit, Finding, Fix
from idemlint.paths import MIGRATION, TEST, kind_of_relative
from idemlint.registry import PARSE_ERROR, RESERVED, UNUSED_SUPPRESSION, is_enabled
from idemlint.rule import Rule
from idemlint.suppression import comment_span, find_suppressions, is_suppressed, real_comment_lines, split_lines

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.context import FileContext
    from idemlint.rule import FixPlan, Report

# Files past these limits are reported as too large or too complex instead of analysed:
# libcst's parser is quadratic on long operator chains and recurses on deep nesting.
MAX_BYTES = 8 * 1024 * 1024
MAX_BRACKET_DEPTH = 100
MAX_OPERATOR_CHAIN = 1000
_STRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_COMMENTS = re.compile(r"#[^\n]*")
_STRUCTURE = re.compile(r"[()\[\]{}\n]|[-+*/%|&^@]|\band\b|\bor\b")


@dataclass(frozen=True)
class FileResult:
    path: str
    findings: tuple[Finding, ...] = ()
    errors: tuple[str, ...] = field(default=())  # internal errors: exit code 2


def rules_for_path(rules: Sequence[type[Rule]], path: str, config: Config, kind: str | None = None) -> list[type[Rule]]:
    """The rules that run on `path`. `kind` (test, migration or source) is judged by
    discovery from the path relative to the project root; without it, from `path` itself."""
    kind = kind_of_relative(path) if kind is None else kind
    if not config.check_tests and kind == TEST:
        return []
    if not config.check_migrations and kind == MIGRATION:
        rules = [rule for rule in rules if not rule.skips_migrations]
    ignores = [codes for pattern, codes in config.per_file_ignores if _path_matches(path, pattern)]
    if not ignores:
        return list(rules)
    flat = [code for codes in ignores for code in codes]
    return [rule for rule in rules if not any(rule.code.startswith(c.upper()) for c in flat)]


def _path_matches(path: str, pattern: str) -> bool:
    return fnmatch(path, pattern) or fnmatch(path, f"*/{pattern}") or fnmatch(path, f"{pattern.rstrip('/')}/*")


T = TypeVar("T")

# A file that takes longer than this to analyse is reported (IDM900) instead of holding up
# the run: a guard for inputs the complexity pre-check does not foresee.
FILE_TIME_BUDGET = 60.0


class _OverBudget(BaseException):
    """BaseException, so the per-rule crash guard (which catches Exception) lets it through."""


@contextlib.contextmanager
def _time_budget(seconds: float) -> Iterator[None]:
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable or seconds <= 0:
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise _OverBudget

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check_source(
    source: bytes | str,
    path: str,
    config: Config,
    rules: Sequence[type[Rule]],
    report_unused_noqa: bool = False,
    kind: str | None = None,
    project: ProjectIndex = EMPTY,
    anchor: str | None = None,
) -> FileResult:
    """All findings for one file's contents. Never raises for bad input. `anchor` is the
    path relative to the project root (per-file-ignores and fingerprints use it, so they do
    not depend on the folder idemlint runs from); `path` is what findings show."""
    try:
        with _time_budget(FILE_TIME_BUDGET):
            return _check_source(source, path, config, rules, report_unused_noqa, kind, project, anchor)
    except _OverBudget:
        message = f"analysis took longer than {FILE_TIME_BUDGET:g} s and was stopped"
        return _parse_error(path, message, 1, 1, _parse_errors_enabled(config), _HELP_BUDGET)


def _parse_errors_enabled(config: Config) -> bool:
    """IDM900 is on whatever `select` says (a file that could not be checked must never look
    clean) and off only when `ignore` names it (`IDM900`, `IDM9`, `IDM`)."""
    return not any(PARSE_ERROR.startswith(pattern.upper()) for pattern in config.ignored)


def _check_source(
    source: bytes | str,
    path: str,
    config: Config,
    rules: Sequence[type[Rule]],
    report_unused_noqa: bool = False,
    kind: str | None = None,
    project: ProjectIndex = EMPTY,
    anchor: str | None = None,
) -> FileResult:
    rules = rules_for_path(rules, anchor or path, config, kind)
    parse_error_on = _parse_errors_enabled(config)
    try:
        text = decode(source) if isinstance(source, bytes) else source
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        return _parse_error(path, f"cannot decode the file: {error}", 1, 1, parse_error_on, _HELP_DECODE)
    if "\x00" in text:
        return _parse_error(path, "the file contains a NUL byte (binary content?)", 1, 1, parse_error_on, _HELP_DECODE)
    lowered = text.lower()
    wanted = [rule for rule in rules if rule.wanted(lowered, config)]
    suppressions = find_suppressions(text)
    if not wanted and not (report_unused_noqa and suppressions):
        return FileResult(path)
    too_complex = _complexity_problem(text)
    if too_complex is not None:
        return _parse_error(path, too_complex, 1, 1, parse_error_on, _HELP_LIMIT)

    import libcst as cst

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        # Python's own message and position when Python rejects the file; a file Python
        # accepts hit a libcst limit (thousands of joined strings): say so.
        rejected = _python_rejects(text)
        if rejected is not None:
            message, line, col = rejected
            return _parse_error(path, f"syntax error: {message}", line, col, parse_error_on, _HELP_SYNTAX)
        what = "valid Python that libcst cannot parse"
        return _parse_error(
            path, f"{what}: {error.message}", error.raw_line, error.raw_column + 1, parse_error_on, _HELP_LIMIT
        )
    except (RecursionError, MemoryError):
        return _parse_error(path, "too deeply nested to analyse", 1, 1, parse_error_on, _HELP_LIMIT)
    except Exception as error:  # libcst raises a few other types on odd input
        return _parse_error(path, f"cannot parse: {type(error).__name__}: {error}", 1, 1, parse_error_on)

    from idemlint.context import FileContext

    errors: list[str] = []
    reports: list[tuple[type[Rule], Report]] = []
    try:
        ctx = FileContext(path, text, module, config, project)
    except RecursionError:
        return _parse_error(path, "too deeply nested to analyse", 1, 1, parse_error_on, _HELP_LIMIT)
    for rule in wanted:
        try:
            reports.extend((rule, report) for report in rule().check(ctx))
        except Exception as error:
            where = traceback.extract_tb(error.__traceback__)[-1]
            errors.append(
                f"{path}: internal error in {rule.code} ({rule.name}): {type(error).__name__}: {error} "
                f"[{where.filename}:{where.lineno}]"
            )

    findings: list[Finding] = []
    if reports:
        try:
            positions = _positions(module)
        except RecursionError:
            return _parse_error(path, "too deeply nested to locate findings", 1, 1, parse_error_on, _HELP_LIMIT)
        lines = split_lines(text)
        starts: list[int] = []  # line offsets, computed once per file (per fix, it was quadratic)
        for rule, report in reports:
            span = positions.get(report.node)
            if span is None:
                continue
            line, col, end_line, end_col = span
            message = report.message
            if report.lines:
                message = Template(message).safe_substitute({k: positions.get(n, (0,))[0] for k, n in report.lines})
            findings.append(
                Finding(
                    path=path,
                    line=line,
                    col=col,
                    end_line=end_line,
                    end_col=end_col,
                    code=rule.code,
                    name=rule.name,
                    message=message,
                    suggestion=report.suggestion or rule.fix_hint,
                    fix=_resolve_fix(report.fix, positions, text, lines, starts or _fill(starts, _line_starts(text)))
                    if report.fix
                    else None,
                    severity=rule.severity,
                    confidence=report.confidence or rule.confidence,
                    fingerprint=fingerprint(
                        rule.code,
                        anchor or path,
                        lines[line - 1] if line <= len(lines) else "",
                        _function_name(ctx, report.node),
                    ),
                )
            )
    findings = _dedupe(findings)
    kept = [f for f in findings if not is_suppressed(suppressions, f.line, f.code)]
    if report_unused_noqa and is_enabled(UNUSED_SUPPRESSION, config.selected, config.ignored):
        kept.extend(_unused_suppressions(path, suppressions, findings, rules, config, split_lines(text)))
    return FileResult(path, tuple(sorted(kept)), tuple(errors))


def fingerprint(code: str, path: str, line_text: str, function: str) -> str:
    normalised = " ".join(line_text.split())
    return hashlib.sha256(f"{code}\0{path}\0{function}\0{normalised}".encode()).hexdigest()[:20]


def _function_name(ctx: FileContext, node: cst.CSTNode) -> str:
    import libcst as cst

    names = [a.name.value for a in ctx.model.ancestors(node) if isinstance(a, (cst.FunctionDef, cst.ClassDef))]
    return ".".join(reversed(names))


def decode(source: bytes) -> str:
    """Bytes to text the way Python itself decodes a source file (cookie, BOM, UTF-8)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    text = source.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def _complexity_problem(text: str) -> str | None:
    """Files that would take libcst minutes to parse or overflow its recursion: very large
    files, deep bracket nesting, long operator chains (`a + b + ...`, quadratic to parse).
    Strings and comments are blanked first so their brackets and dashes do not count."""
    if len(text) > MAX_BYTES:
        return f"too large to analyse ({len(text)} characters; the limit is {MAX_BYTES})"
    code = _COMMENTS.sub("", _STRINGS.sub('""', text))
    depth = deepest = chain = longest = 0
    for match in _STRUCTURE.finditer(code):
        token = match.group()
        if token in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif token in ")]}":
            depth -= 1
        elif token == "\n":
            if depth <= 0:
                chain = 0  # a new logical line
        else:
            chain += 1
            longest = max(longest, chain)
    if deepest > MAX_BRACKET_DEPTH:
        return f"too deeply nested to analyse ({deepest} levels of brackets; the limit is {MAX_BRACKET_DEPTH})"
    if longest > MAX_OPERATOR_CHAIN:
        return f"too complex to analyse (an expression with {longest} operators; the limit is {MAX_OPERATOR_CHAIN})"
    return None


_HELP_SYNTAX = "Fix the syntax error so Python can parse the file; idemlint checked nothing else in it."
_HELP_DECODE = "Save the file as text in its declared encoding (UTF-8 by default); idemlint checked nothing else in it."
_HELP_LIMIT = (
    "The file is valid Python but beyond what idemlint analyses (size, nesting or a very long expression); "
    "split it, or exclude it if it is generated."
)
_HELP_BUDGET = (
    "Analysis passed the per-file time budget; please report the file to idemlint. Exclude it meanwhile "
    "(`extend-exclude`)."
)


def _python_rejects(text: str) -> tuple[str, int, int] | None:
    """Python's own syntax error (message, line, column) for `text`, or None if it compiles."""
    try:
        compile(text, "<file>", "exec", dont_inherit=True)
    except SyntaxError as error:
        return error.msg, error.lineno or 1, error.offset or 1
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def _parse_error(
    path: str, message: str, line: int, col: int, enabled: bool, suggestion: str = _HELP_SYNTAX
) -> FileResult:
    if not enabled:
        return FileResult(path)
    name, summary = RESERVED[PARSE_ERROR]
    finding = Finding(
        path=path,
        line=max(line, 1),
        col=max(col, 1),
        code=PARSE_ERROR,
        end_line=max(line, 1),
        end_col=max(col, 1),
        name=name,
        message=message,
        suggestion=suggestion,
    )
    return FileResult(path, (finding,))


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for match in re.finditer(r"\r\n|\r|\n", text):
        starts.append(match.end())
    return starts


def _fill(target: list[int], values: list[int]) -> list[int]:
    target.extend(values)
    return target


def _resolve_fix(
    plan: FixPlan,
    positions: dict[cst.CSTNode, tuple[int, int, int, int]],
    text: str,
    lines: list[str],
    starts: list[int],
) -> Fix | None:
    """Node-placed edits to character offsets in the source; None if a node has no position.

    Text that an edit brings in ends its lines like the line it goes to (a CRLF file stays
    CRLF), and text inserted after a last line that has no line break starts with one."""
    edits = []
    for edit in plan.edits:
        span = positions.get(edit.node)
        if span is None:
            return None
        line, col, end_line, end_col = span
        start = starts[line - 1] + col - 1
        end = starts[end_line - 1] + end_col - 1
        indent = re.match(r"[ \t]*", lines[line - 1]).group()  # type: ignore[union-attr]
        if edit.kind == "replace":
            if edit.until is not None:
                until = positions.get(edit.until)
                if until is None:
                    return None
                end = starts[until[0] - 1] + until[1] - 1
            edits.append(Edit(start, end, _with_line_ending(edit.text, _line_ending(text, starts, line))))
        elif edit.kind == "delete_line":
            edits.append(Edit(starts[line - 1], starts[end_line] if end_line < len(starts) else len(text), ""))
        elif edit.kind == "delete_item":
            edits.append(_delete_item(text, start, end))
        elif edit.kind == "insert_before":
            code = _with_line_ending(_indent(edit.text, indent), _line_ending(text, starts, line))
            edits.append(Edit(starts[line - 1], starts[line - 1], code))
        elif edit.kind == "insert_after":
            newline = _line_ending(text, starts, end_line)
            code = _with_line_ending(_indent(edit.text, indent), newline)
            if end_line < len(starts):
                at = starts[end_line]
            else:  # the node is on the last line, which has no line break of its own
                at, code = len(text), newline + code
            edits.append(Edit(at, at, code))
    return Fix(tuple(edits), plan.safe, plan.description)


def _indent(code: str, indent: str) -> str:
    return "".join(indent + line if line.strip() else line for line in code.splitlines(keepends=True))


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _line_ending(text: str, starts: list[int], line: int) -> str:
    """The line break that ends `line` (1-based); for a last line without one, the file's
    first line break; "\\n" in a file of one line."""
    if line < len(starts):
        at = starts[line]
        return "\r\n" if text[at - 2 : at] == "\r\n" else text[at - 1]
    found = _LINE_BREAK.search(text)
    return found.group() if found else "\n"


def _with_line_ending(code: str, newline: str) -> str:
    return code if newline == "\n" and "\r" not in code else _LINE_BREAK.sub(newline, code)


_ITEM_OWNS_LINE_AFTER = re.compile(r"[ \t]*,?[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n)")
_COMMA_AFTER = re.compile(r"[ \t]*,[ \t]*")


def _delete_item(text: str, start: int, end: int) -> Edit:
    """Remove one item of a comma-separated list (an argument, an imported name) with one
    comma next to it, so that neither `f(a, )` nor `f(, b)` is left: the item's whole
    lines when it has them to itself, else the comma after it when another item follows
    on the same line, else the comma before it, else the comma after it."""
    line_start = max(text.rfind("\n", 0, start), text.rfind("\r", 0, start)) + 1
    own_line = _ITEM_OWNS_LINE_AFTER.match(text, end)
    if own_line is not None and not text[line_start:start].strip(" \t\f"):
        return Edit(line_start, own_line.end(), "")
    after = _COMMA_AFTER.match(text, end)
    if after is not None and after.end() < len(text) and text[after.end()] not in ")]}#\r\n":
        return Edit(start, after.end(), "")
    before = start
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    if before > 0 and text[before - 1] == ",":
        return Edit(before - 1, end, "")
    return Edit(start, after.end() if after is not None else end, "")


def _positions(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int, int, int]]:
    """1-based (line, col, end_line, end_col) for every node, resolved only when needed.

    libcst's position pass recurses once per nesting level; thousands of implicitly joined
    strings exceed Python's limit, so such files are resolved again on a thread with a
    large stack and a raised recursion limit."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    def resolve() -> dict[cst.CSTNode, tuple[int, int, int, int]]:
        ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        return {node: (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1) for node, r in ranges.items()}

    try:
        return resolve()
    except RecursionError:
        return _on_big_stack(resolve)


def _on_big_stack(function: Callable[[], T]) -> T:
    outcome: dict[str, object] = {}

    def run() -> None:
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 100_000))
        try:
            outcome["value"] = function()
        except BaseException as error:  # handed back to the calling thread
            outcome["error"] = error
        finally:
            sys.setrecursionlimit(limit)

    previous = threading.stack_size(512 * 1024 * 1024)
    try:
        worker = threading.Thread(target=run, name="idemlint-deep-positions")
        worker.start()
    finally:
        threading.stack_size(previous)
    worker.join()
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[int, int, str]] = set()
    out = []
    for finding in sorted(findings):
        key = (finding.line, finding.col, finding.code)
        if key not in seen:
            seen.add(key)
            out.append(finding)
    return out


def _unused_suppressions(
    path: str,
    suppressions: dict[int, frozenset[str] | None],
    findings: list[Finding],
    rules: Sequence[type[Rule]],
    config: Config,
    lines: list[str],
) -> list[Finding]:
    """`# noqa: IDM...` codes that matched no finding on their line, for rules that ran,
    reported at the comment."""
    active = {rule.code for rule in rules}
    out = []
    comments = real_comment_lines("".join(line + "\n" for line in lines), set(suppressions))
    for line, codes in sorted(suppressions.items()):
        if codes is None or line not in comments:
            continue
        found_here = {f.code for f in findings if f.line == line}
        unused = sorted(
            c for c in codes if c.startswith("IDM") and c in active and not any(f.startswith(c) for f in found_here)
        )
        if unused:
            name, _ = RESERVED[UNUSED_SUPPRESSION]
            start, end = comment_span(lines[line - 1] if line <= len(lines) else "")
            out.append(
                Finding(
                    path=path,
                    line=line,
                    col=start,
                    code=UNUSED_SUPPRESSION,
                    end_line=line,
                    end_col=end,
                    name=name,
                    message=f"unused suppression of {', '.join(unused)}: nothing is reported here",
                    suggestion="Remove the code from the noqa comment (or the comment).",
                )
            )
    return out
