"""From a file's bytes to an analysable `FileContext`, or the reason it cannot be analysed.

The engine and `idemlint audit` both go through `parse_source`, so both refuse the same
inputs the same way: undecodable or binary files, files too large or too deeply nested for
libcst (its parser is quadratic on long operator chains and recurses on deep nesting),
syntax errors (in Python's own words), and parser crashes. None of these raises: each is a
`Rejected`, which the engine reports as IDM900. `within_budget` stops an analysis that runs
past the per-file time budget, for inputs the complexity check does not foresee.
"""

from __future__ import annotations

import contextlib
import io
import re
import signal
import sys
import threading
import tokenize
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.config import Config
from idemlint.reading import MAX_BYTES

if TYPE_CHECKING:
    import libcst as cst
    from libcst.metadata import CodeRange

    from idemlint.context import FileContext

T = TypeVar("T")

MAX_BRACKET_DEPTH = 100
MAX_OPERATOR_CHAIN = 1000
# A file that takes longer than this to analyse is reported (IDM900) instead of holding up the run.
FILE_TIME_BUDGET = 60.0

_STRINGS = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_COMMENTS = re.compile(r"#[^\n]*")
_STRUCTURE = re.compile(r"[()\[\]{}\n]|[-+*/%|&^@]|\band\b|\bor\b")

HELP_SYNTAX = "Fix the syntax error so Python can parse the file; idemlint checked nothing else in it."
HELP_DECODE = "Save the file as text in its declared encoding (UTF-8 by default); idemlint checked nothing else in it."
HELP_LIMIT = (
    "The file is valid Python but beyond what idemlint analyses (size, nesting or a very long expression); "
    "split it, or exclude it if it is generated."
)
HELP_BUDGET = (
    "Analysis passed the per-file time budget; please report the file to idemlint. Exclude it meanwhile "
    "(`extend-exclude`)."
)


@dataclass(frozen=True)
class Rejected:
    """Why a file was not analysed, where, and what the user can do about it."""

    message: str
    line: int = 1
    col: int = 1
    help: str = HELP_SYNTAX


def decode(source: bytes) -> str:
    """Bytes to text the way Python itself decodes a source file (cookie, BOM, UTF-8)."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(source).readline)
    text = source.decode(encoding)
    return text[1:] if text.startswith("\ufeff") else text


def decode_source(source: bytes | str) -> str | Rejected:
    """The file's text, or why it is not text. Separate from parsing so that the engine's
    pre-filter can reject a file on its words before paying for libcst."""
    try:
        text = decode(source) if isinstance(source, bytes) else source
    except (SyntaxError, UnicodeDecodeError, LookupError) as error:
        return Rejected(f"cannot decode the file: {error}", help=HELP_DECODE)
    if "\x00" in text:
        return Rejected("the file contains a NUL byte (binary content?)", help=HELP_DECODE)
    return text


def parse_source(
    source: bytes | str, path: str, config: Config, project: ProjectIndex = EMPTY
) -> FileContext | Rejected:
    """The one libcst parse of a file, wrapped in the `FileContext` every analysis reads."""
    if isinstance(source, bytes) and len(source) > MAX_BYTES:  # read_source stops one byte past
        return Rejected(f"too large to analyse (more than {MAX_BYTES} bytes)", help=HELP_LIMIT)
    text = decode_source(source)
    if isinstance(text, Rejected):
        return text
    too_complex = complexity_problem(text)
    if too_complex is not None:
        return Rejected(too_complex, help=HELP_LIMIT)

    import libcst as cst

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError as error:
        # Python's own message and position when Python rejects the file; a file Python
        # accepts hit a libcst limit (thousands of joined strings): say so.
        rejected = _python_rejects(text)
        if rejected is not None:
            message, line, col = rejected
            return Rejected(f"syntax error: {message}", line, col)
        what = "valid Python that libcst cannot parse"
        return Rejected(f"{what}: {error.message}", error.raw_line, error.raw_column + 1, HELP_LIMIT)
    except (RecursionError, MemoryError):
        return Rejected("too deeply nested to analyse", help=HELP_LIMIT)
    except Exception as error:  # libcst raises a few other types on odd input
        return Rejected(f"cannot parse: {type(error).__name__}: {error}")

    from idemlint.context import FileContext

    try:
        return FileContext(path, text, module, config, project)
    except RecursionError:
        return Rejected("too deeply nested to analyse", help=HELP_LIMIT)


def complexity_problem(text: str) -> str | None:
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


def _python_rejects(text: str) -> tuple[str, int, int] | None:
    """Python's own syntax error (message, line, column) for `text`, or None if it compiles."""
    try:
        compile(text, "<file>", "exec", dont_inherit=True)
    except SyntaxError as error:
        return error.msg, error.lineno or 1, error.offset or 1
    except (ValueError, RecursionError, MemoryError):
        return None
    return None


def positions(module: cst.Module) -> Mapping[cst.CSTNode, tuple[int, int, int, int]]:
    """1-based (line, col, end_line, end_col) for every node, resolved only when needed.

    Code generation recurses once per nesting level; thousands of implicitly joined
    strings exceed Python's limit, so such files are resolved again on a thread with a
    large stack and a raised recursion limit."""

    def resolve() -> Mapping[cst.CSTNode, tuple[int, int, int, int]]:
        try:
            from idemlint.source_spans import SourceSpans

            return SourceSpans(module)
        except (ImportError, AttributeError, TypeError):  # libcst's internal hooks changed: the public way
            return _provider_positions(module)

    try:
        return resolve()
    except RecursionError:
        return _on_big_stack(resolve)


def _provider_positions(module: cst.Module) -> dict[cst.CSTNode, tuple[int, int, int, int]]:
    """libcst's PositionProvider: the same spans as SourceSpans, about three times slower."""
    from libcst.metadata import MetadataWrapper, PositionProvider

    ranges: Mapping[cst.CSTNode, CodeRange] = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {node: (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1) for node, r in ranges.items()}


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


@contextlib.contextmanager
def _thread_budget(seconds: float) -> Iterator[None]:
    """The budget on a thread that cannot take SIGALRM: a timer raises `_OverBudget` in it."""
    import ctypes

    ident = ctypes.c_ulong(threading.get_ident())
    raise_in = ctypes.pythonapi.PyThreadState_SetAsyncExc
    lock, done = threading.Lock(), [False]

    def expire() -> None:
        with lock:
            if not done[0]:
                raise_in(ident, ctypes.py_object(_OverBudget))

    timer = threading.Timer(seconds, expire)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        with lock:
            done[0] = True
        timer.cancel()
        raise_in(ident, None)  # an expiry that came just before the end: nothing left pending


class _OverBudget(BaseException):
    """BaseException, so the per-rule crash guard (which catches Exception) lets it through."""


def within_budget(work: Callable[[], T], seconds: float = FILE_TIME_BUDGET) -> T | Rejected:
    """`work()`, or a `Rejected` when it runs past `seconds`. Enforced with SIGALRM on the main
    thread (worker processes and the CLI); on another thread (the language server's worker)
    by raising the same exception in that thread when a timer expires, which takes effect at
    the next Python instruction (the input guards keep libcst's native parser short)."""
    try:
        with _time_budget(seconds):
            return work()
    except _OverBudget:
        return Rejected(f"analysis took longer than {seconds:g} s and was stopped", help=HELP_BUDGET)


@contextlib.contextmanager
def _time_budget(seconds: float) -> Iterator[None]:
    if seconds <= 0:
        yield
        return
    usable = hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not usable:
        with _thread_budget(seconds):
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
