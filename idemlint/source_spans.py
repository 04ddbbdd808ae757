"""Where each node of a parsed module lies in its source, at a third of libcst's cost.

libcst's `PositionProvider` regenerates the module's code and, for every token, splits it on
newlines and builds a `CodePosition`, and for every node a `CodeRange` through a generator
context manager. The engine needs the span of only the few nodes a rule reports. This
module runs the same code generation with a state that counts characters. It records
each node's (start, end) offsets under the same rules as `PositionProvider`:
- syntactic positions where a node sets them (`record_syntactic_position`);
- otherwise, the node's whole codegen.

Offsets become (line, column) only when a span is asked for, against the newlines of the
generated text (the source itself, as libcst round-trips it). The libcst hooks used here are
internal (`CodegenState`, `Module._codegen`). `idemlint.parsing.positions` falls back to the
public provider if they change. tests/test_engine.py checks the two agree on every fixture.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping

import libcst as cst
from libcst._nodes.internal import CodegenState

from idemlint.fix_offsets import line_starts

Span = tuple[int, int, int, int]  # 1-based line and column of the start, then of the end


class _OffsetState(CodegenState):
    """Code generation that records each node's character offsets instead of positions."""

    __slots__ = ("offset", "open", "spans")

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.offset = 0
        self.open: list[int] = []
        self.spans: dict[cst.CSTNode, tuple[int, int]] = {}

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        self.offset += sum(map(len, self.indent_tokens))

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.open.append(self.offset)

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.open.pop()
        if node not in self.spans:  # a syntactic position, recorded inside, stands
            self.spans[node] = (start, self.offset)

    def pop_trailing_newline(self) -> None:
        """Kept: offsets past it were counted with it, as libcst's positions count it."""

    def record_syntactic_position(  # type: ignore[override]
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """`record_syntactic_position` as a plain context manager (a generator one costs more than
    the node's own code generation)."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(
        self, state: _OffsetState, node: cst.CSTNode, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None
    ) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node
        self.start = 0

    def __enter__(self) -> None:
        self.start = self.state.offset

    def __exit__(self, *exc_info: object) -> None:
        if exc_info[0] is not None:
            return  # code generation stopped (too deep): record nothing, let its error through
        spans = self.state.spans
        start = self.start if self.start_node is None else spans[self.start_node][0]
        end = self.state.offset if self.end_node is None else spans[self.end_node][1]
        spans[self.node] = (start, end)


class SourceSpans(Mapping[cst.CSTNode, Span]):
    """Every node's span, each converted to lines and columns when it is looked up."""

    def __init__(self, module: cst.Module) -> None:
        state = _OffsetState(module)
        module._codegen(state)
        self._offsets = state.spans
        # line breaks as libcst's positions count them (`\r\n`, `\r`, `\n`), as Python does
        self._line_starts = line_starts("".join(state.tokens))

    def _at(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self._line_starts, offset)
        return line, offset - self._line_starts[line - 1] + 1

    def __getitem__(self, node: cst.CSTNode) -> Span:
        start, end = self._offsets[node]
        return (*self._at(start), *self._at(end))

    def __iter__(self) -> Iterator[cst.CSTNode]:
        return iter(self._offsets)

    def __len__(self) -> int:
        return len(self._offsets)
