"""`idemlint server` end to end: the server runs as a subprocess (`python -m idemlint.server`)
and pygls's language client talks LSP to it over stdio.

Every test is bounded: it runs under `asyncio.wait_for`, and the server process is killed if
it is still running when the test ends. pygls is a requirement of these tests (the `server`
extra): without it they fail, they do not skip.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import shutil
import sys
from collections.abc import AsyncIterator, Callable, Coroutine
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from idemlint.config import Config
from idemlint.engine import check_source
from idemlint.registry import enabled_rules, rule_by_code_or_name

from conftest import CALLER_INSTANCE_RACE, KEY_IN_LOOP, KEY_PER_DECORATED_ATTEMPT, SLEEP_IN_LOOP

TEST_TIMEOUT = 60.0  # whole test
WAIT = 15.0  # one expected notification

BUGGY = KEY_PER_DECORATED_ATTEMPT

CLEAN = BUGGY.replace("def charge(order):\n    key = str(uuid.uuid4())", "def charge(order, key):")

PROJECT_INDEX = Path(__file__).parent / "data" / "project_index"


# -- a client ------------------------------------------------------------------------------------


class Client(LanguageClient):
    def __init__(self) -> None:
        super().__init__("idemlint-tests", "0")
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.logs: list[lsp.LogMessageParams] = []
        self.versions: dict[str, int] = {}

        @self.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def publish(params: lsp.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)

        @self.feature(lsp.WINDOW_LOG_MESSAGE)
        def log_message(params: lsp.LogMessageParams) -> None:
            self.logs.append(params)

    # documents

    def open(self, uri: str, text: str) -> None:
        self.versions[uri] = 1
        item = lsp.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        self.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))

    def open_file(self, root: Path, name: str, text: str) -> str:
        """Write `name` under `root`, open it as the editor would, and return its URI."""
        uri = uri_of(root, name, text)
        self.open(uri, text)
        return uri

    def change(self, uri: str, text: str) -> int:
        """Replace the whole (unsaved) buffer; the new version."""
        version = self.versions[uri] = self.versions[uri] + 1
        self.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )
        return version

    async def diagnostics(
        self, uri: str, accept: Callable[[lsp.PublishDiagnosticsParams], bool] = lambda p: True, after: int = 0
    ) -> list[lsp.Diagnostic]:
        """The diagnostics of the first publication for `uri`, from the `after`-th on, that
        `accept` takes; fails after WAIT seconds."""
        deadline = asyncio.get_running_loop().time() + WAIT
        while True:
            for params in self.published.get(uri, [])[after:]:
                if accept(params):
                    return list(params.diagnostics)
            assert asyncio.get_running_loop().time() < deadline, f"no diagnostics for {uri}: {self.published}"
            await asyncio.sleep(0.02)

    def count(self, uri: str) -> int:
        return len(self.published.get(uri, []))

    async def code_actions(
        self, uri: str, diagnostic: lsp.Diagnostic, only: list[str] | None = None
    ) -> list[lsp.CodeAction]:
        params = lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=diagnostic.range,
            context=lsp.CodeActionContext(diagnostics=[diagnostic], only=only),
        )
        result = await asyncio.wait_for(self.text_document_code_action_async(params), WAIT)
        return [a for a in result or [] if isinstance(a, lsp.CodeAction)]


@contextlib.asynccontextmanager
async def session(root: Path, options: dict[str, Any] | None = None) -> AsyncIterator[Client]:
    """A server for the project at `root`, initialized; on the way out, shutdown and exit,
    which must end the process with code 0."""
    client = Client()
    await client.start_io(sys.executable, "-m", "idemlint.server", cwd=str(root))
    process = client._server
    assert process is not None and process.stderr is not None
    errors = asyncio.create_task(process.stderr.read())  # drained, so the server never blocks on it
    clean = False
    try:
        result = await asyncio.wait_for(
            client.initialize_async(
                lsp.InitializeParams(
                    capabilities=lsp.ClientCapabilities(),
                    root_uri=root.as_uri(),
                    initialization_options=options,
                )
            ),
            WAIT,
        )
        assert result.server_info is not None and result.server_info.name == "idemlint"
        client.initialized(lsp.InitializedParams())
        yield client
        await asyncio.wait_for(client.shutdown_async(None), WAIT)
        client.exit(None)
        code = await asyncio.wait_for(process.wait(), WAIT)
        stderr = await asyncio.wait_for(errors, WAIT)
        assert code == 0, stderr.decode(errors="replace")
        clean = True
    finally:
        if process.returncode is None:
            process.kill()
        if not clean:
            await process.wait()
        await client.stop()


def run(test: Coroutine[Any, Any, None]) -> None:
    asyncio.run(asyncio.wait_for(test, TEST_TIMEOUT))


def project(tmp_path: Path, table: str = "") -> Path:
    """A project root: its own pyproject.toml, so no configuration above it applies."""
    (tmp_path / "pyproject.toml").write_text(f"[tool.idemlint]\n{table}", encoding="utf-8")
    return tmp_path


def uri_of(root: Path, name: str, text: str | None = None) -> str:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        path.write_text(text, encoding="utf-8")
    return path.as_uri()


def apply(text: str, edits: list[lsp.TextEdit]) -> str:
    """Apply edits as an editor does: positions in UTF-16 code units, all relative to the
    original text, applied from the last to the first."""
    lines = text.splitlines(keepends=True) + [""]

    def offset(position: lsp.Position) -> int:
        before = sum(len(line) for line in lines[: position.line])
        line = lines[position.line].rstrip("\r\n")
        count = taken = 0
        for char in line:
            if count >= position.character:
                break
            count += 2 if ord(char) > 0xFFFF else 1
            taken += 1
        return before + taken

    spans = [(offset(e.range.start), offset(e.range.end), e.new_text) for e in edits]
    for start, end, new in sorted(spans, key=lambda s: (s[0], s[1]), reverse=True):
        text = text[:start] + new + text[end:]
    return text


def edits_of(action: lsp.CodeAction, uri: str) -> list[lsp.TextEdit]:
    assert action.edit is not None and action.edit.changes is not None, action
    return list(action.edit.changes[uri])


def codes(source: str) -> list[str]:
    result = check_source(source, "service.py", Config(), enabled_rules((), ()), report_unused_noqa=True)
    return [f.code for f in result.findings]


# -- tests ---------------------------------------------------------------------------------------


def test_a_buggy_file_gets_idm001_at_the_exact_range_and_a_clean_buffer_clears_it(tmp_path: Path) -> None:
    async def body() -> None:
        root = project(tmp_path)
        async with session(root) as client:
            uri = client.open_file(root, "pay.py", BUGGY)
            [diagnostic] = await client.diagnostics(uri)
            assert diagnostic.code == "IDM001"
            assert diagnostic.range == lsp.Range(start=lsp.Position(7, 14), end=lsp.Position(7, 26))  # uuid.uuid4()
            assert diagnostic.severity == lsp.DiagnosticSeverity.Error
            assert diagnostic.source == "idemlint"
            assert diagnostic.code_description is not None
            assert diagnostic.code_description.href.endswith("docs/rules.md#idm001-key-regenerated-per-attempt")
            assert "uuid.uuid4() runs on every attempt" in diagnostic.message

            # The unsaved buffer, debounced: only the last of quick changes is checked.
            seen = client.count(uri)
            client.change(uri, BUGGY.replace("key = str", "key  = str"))
            version = client.change(uri, CLEAN)
            assert await client.diagnostics(uri, lambda p: p.version == version, after=seen) == []
            assert all(p.version in (1, version) for p in client.published[uri])

            # Closing the document clears its diagnostics.
            seen = client.count(uri)
            client.text_document_did_close(
                lsp.DidCloseTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=uri))
            )
            assert await client.diagnostics(uri, after=seen) == []

    run(body())


def test_columns_are_utf16_code_units(tmp_path: Path) -> None:
    source = BUGGY.replace("key = str(uuid.uuid4())", 'key = "\U0001f600é" + str(uuid.uuid4())')

    async def body() -> None:
        root = project(tmp_path)
        async with session(root) as client:
            uri = client.open_file(root, "pay.py", source)
            [diagnostic] = await client.diagnostics(uri)
            # `    key = "😀é" + str(` is 21 characters, 22 UTF-16 units: the emoji takes two.
            assert diagnostic.code == "IDM001"
            assert diagnostic.range == lsp.Range(start=lsp.Position(7, 22), end=lsp.Position(7, 34))

    run(body())


def test_the_suppress_action_adds_a_noqa_comment_that_silences_the_finding(tmp_path: Path) -> None:
    async def body() -> None:
        root = project(tmp_path)
        async with session(root) as client:
            uri = client.open_file(root, "pay.py", BUGGY)
            [diagnostic] = await client.diagnostics(uri)
            actions = await client.code_actions(uri, diagnostic)
            [suppress] = [a for a in actions if a.title == "Suppress IDM001 on this line"]
            assert suppress.kind == lsp.CodeActionKind.QuickFix
            assert not [a for a in actions if "(unsafe)" in a.title]  # IDM001 here has no fix at all
            fixed = apply(BUGGY, edits_of(suppress, uri))
            assert "    key = str(uuid.uuid4())  # noqa: IDM001\n" in fixed
            assert codes(fixed) == []

            # An existing noqa comment that names other codes is extended.
            commented = BUGGY.replace("key = str(uuid.uuid4())", "key = str(uuid.uuid4())  # noqa: E501")
            seen = client.count(uri)
            version = client.change(uri, commented)
            [diagnostic] = await client.diagnostics(uri, lambda p: p.version == version, after=seen)
            [suppress] = [a for a in await client.code_actions(uri, diagnostic) if a.title.startswith("Suppress")]
            fixed = apply(commented, edits_of(suppress, uri))
            assert "    key = str(uuid.uuid4())  # noqa: E501, IDM001\n" in fixed

            # The edited buffer, sent back, has no diagnostics left.
            seen = client.count(uri)
            version = client.change(uri, fixed)
            assert await client.diagnostics(uri, lambda p: p.version == version, after=seen) == []

    run(body())


def test_a_safe_quick_fix_and_fix_all_leave_parsing_text_without_the_finding(tmp_path: Path) -> None:
    async def body() -> None:
        root = project(tmp_path)
        async with session(root) as client:
            uri = client.open_file(root, "pay.py", KEY_IN_LOOP)
            [diagnostic] = await client.diagnostics(uri)
            assert diagnostic.code == "IDM001"
            actions = await client.code_actions(uri, diagnostic)
            assert [a.title for a in actions] == [
                "IDM001: generate idempotency_key once, before the retry loop",
                "Suppress IDM001 on this line",
                "idemlint: apply all safe fixes",  # offered with the quick fixes when there are any
            ]
            quick_fix = actions[0]
            assert quick_fix.kind == lsp.CodeActionKind.QuickFix and quick_fix.is_preferred
            fixed = apply(KEY_IN_LOOP, edits_of(quick_fix, uri))
            ast.parse(fixed)
            assert "    idempotency_key = str(uuid.uuid4())\n    for attempt" in fixed
            assert "IDM001" not in codes(fixed)

            [fix_all] = await client.code_actions(uri, diagnostic, only=[lsp.CodeActionKind.SourceFixAll])
            assert fix_all.kind == "source.fixAll.idemlint"
            [whole] = edits_of(fix_all, uri)
            assert whole.range.start == lsp.Position(0, 0)
            assert whole.range.end == lsp.Position(KEY_IN_LOOP.count("\n"), 0)
            assert apply(KEY_IN_LOOP, [whole]) == fixed

    run(body())


def test_unsafe_fixes_are_offered_only_with_the_setting(tmp_path: Path) -> None:
    async def titles(root: Path, options: dict[str, Any] | None) -> list[str]:
        async with session(root, options) as client:
            uri = client.open_file(root, "fetch.py", SLEEP_IN_LOOP)
            [diagnostic] = await client.diagnostics(uri)
            assert diagnostic.code == "IDM202"
            assert diagnostic.severity == lsp.DiagnosticSeverity.Warning
            # nothing safe to fix, so fix-all (asked for on save) offers nothing
            assert await client.code_actions(uri, diagnostic, only=["source.fixAll"]) == []
            return [a.title for a in await client.code_actions(uri, diagnostic)]

    async def body() -> None:
        root = project(tmp_path)
        assert await titles(root, None) == ["Suppress IDM202 on this line"]
        assert await titles(root, {"unsafeFixes": True}) == [
            "IDM202: sleep a random time up to the same delay (full jitter) (unsafe)",
            "Suppress IDM202 on this line",
        ]

    run(body())


def test_a_syntax_error_gets_one_idm900_diagnostic(tmp_path: Path) -> None:
    # (a file with nothing any rule looks for is not parsed at all, so none of its errors show)
    source = BUGGY.replace("def charge(order):", "def charge(order:")

    async def body() -> None:
        root = project(tmp_path)
        async with session(root) as client:
            uri = client.open_file(root, "broken.py", source)
            [diagnostic] = await client.diagnostics(uri)
            assert diagnostic.code == "IDM900"
            assert diagnostic.message.startswith("syntax error")
            assert diagnostic.severity == lsp.DiagnosticSeverity.Error
            start, end = diagnostic.range.start, diagnostic.range.end
            assert start.line == end.line and end.character == start.character + 1
            actions = await client.code_actions(uri, diagnostic)
            assert not [a for a in actions if a.title.startswith("Suppress")]  # a comment cannot silence it

    run(body())


def test_hover_shows_the_rules_summary_and_fix_hint(tmp_path: Path) -> None:
    rule = rule_by_code_or_name("IDM001")
    assert rule is not None
    source = BUGGY.replace('"Idempotency-Key": key})', '"Idempotency-Key": key})  # noqa: IDM001, E501')

    async def body() -> None:
        root = project(tmp_path)
        async with session(root) as client:
            uri = client.open_file(root, "pay.py", source)
            diagnostic, unused = await client.diagnostics(uri)
            assert (diagnostic.code, unused.code) == ("IDM001", "IDM800")  # the noqa is on the wrong line
            assert list(unused.tags or ()) == [lsp.DiagnosticTag.Unnecessary]

            async def hover(line: int, character: int) -> lsp.Hover | None:
                params = lsp.HoverParams(
                    text_document=lsp.TextDocumentIdentifier(uri=uri), position=lsp.Position(line, character)
                )
                return await asyncio.wait_for(client.text_document_hover_async(params), WAIT)

            on_finding = await hover(7, 20)
            assert on_finding is not None and isinstance(on_finding.contents, lsp.MarkupContent)
            assert on_finding.contents.kind == lsp.MarkupKind.Markdown
            assert rule.summary in on_finding.contents.value
            assert rule.fix_hint in on_finding.contents.value
            assert on_finding.range == diagnostic.range

            noqa_line = source.splitlines()[8]
            on_code = await hover(8, noqa_line.index("IDM001") + 2)
            assert on_code is not None and isinstance(on_code.contents, lsp.MarkupContent)
            assert rule.summary in on_code.contents.value

            assert await hover(0, 2) is None  # `import uuid`: nothing to say

    run(body())


def test_configuration_settings_and_test_skips_are_honoured(tmp_path: Path) -> None:
    async def body() -> None:
        root = project(tmp_path, 'per-file-ignores = {"legacy/*" = ["IDM001"]}\n')
        async with session(root) as client:
            skipped = uri_of(root, "tests/test_pay.py", BUGGY)
            ignored = uri_of(root, "legacy/pay.py", BUGGY)
            checked = uri_of(root, "pay.py", BUGGY)
            for uri in (skipped, ignored, checked):
                client.open(uri, BUGGY)
            assert [d.code for d in await client.diagnostics(checked)] == ["IDM001"]
            assert await client.diagnostics(skipped) == []  # test code is not checked by default
            assert await client.diagnostics(ignored) == []

        async with session(root, {"ignore": ["IDM001"]}) as client:
            uri = client.open_file(root, "pay.py", BUGGY)
            assert await client.diagnostics(uri) == []

        async with session(root, {"minConfidence": "medium"}) as client:
            uri = client.open_file(root, "webhooks.py", CALLER_INSTANCE_RACE)
            assert await client.diagnostics(uri) == []  # measured low: an instance a caller loaded

    run(body())


def test_a_percent_encoded_uri_is_checked_and_published_as_the_client_sent_it(tmp_path: Path) -> None:
    # pygls keeps open documents under the unquoted URI; the client knows only the one it sent.
    (tmp_path / "my project").mkdir()
    root = project(tmp_path / "my project")

    async def body() -> None:
        async with session(root) as client:
            uri = client.open_file(root, "pay.py", BUGGY)
            assert "/my%20project/" in uri
            assert [d.code for d in await client.diagnostics(uri)] == ["IDM001"]

            # A saved configuration re-checks the open documents, published under the same URI.
            config = root / "pyproject.toml"
            config.write_text('[tool.idemlint]\nignore = ["IDM001"]\n', encoding="utf-8")
            seen = client.count(uri)
            client.text_document_did_save(
                lsp.DidSaveTextDocumentParams(text_document=lsp.TextDocumentIdentifier(uri=config.as_uri()))
            )
            assert await client.diagnostics(uri, after=seen) == []
            assert set(client.published) == {uri}

    run(body())


def test_a_failure_on_one_document_is_logged_and_the_server_keeps_serving(tmp_path: Path) -> None:
    async def body() -> None:
        root = project(tmp_path)
        async with session(root) as client:
            broken = root.as_uri() + "/bad%00name.py"  # a NUL byte: the path cannot even be resolved
            client.open(broken, BUGGY)
            deadline = asyncio.get_running_loop().time() + WAIT
            while not [m for m in client.logs if m.type == lsp.MessageType.Error]:
                assert asyncio.get_running_loop().time() < deadline, client.logs
                await asyncio.sleep(0.02)
            [error] = [m for m in client.logs if m.type == lsp.MessageType.Error]
            assert "failed" in error.message and "Traceback" in error.message

            uri = client.open_file(root, "pay.py", BUGGY)
            assert [d.code for d in await client.diagnostics(uri)] == ["IDM001"]

    run(body())


def test_a_changed_helper_rechecks_its_open_callers(tmp_path: Path) -> None:
    root = tmp_path / "project"
    shutil.copytree(PROJECT_INDEX, root)
    tasks = root / "jobs" / "tasks.py"
    models = root / "shop" / "models.py"

    async def body() -> None:
        async with session(root, {"minConfidence": "low"}) as client:
            uri = tasks.as_uri()
            client.open(uri, tasks.read_text(encoding="utf-8"))
            assert [(d.range.start.line, d.code) for d in await client.diagnostics(uri)] == [(9, "IDM103")]

            # Job.set_status stops checking whether the job is complete: `fail` is now a finding too.
            models.write_text(models.read_text().replace("        if self.complete:\n            return\n", ""))
            seen = client.count(uri)
            client.workspace_did_change_watched_files(
                lsp.DidChangeWatchedFilesParams(
                    changes=[lsp.FileEvent(uri=models.as_uri(), type=lsp.FileChangeType.Changed)]
                )
            )
            diagnostics = await client.diagnostics(uri, after=seen)
            assert [(d.range.start.line, d.code) for d in diagnostics] == [(4, "IDM103"), (9, "IDM103")]

    run(body())


def test_settings_read_min_confidence() -> None:
    from idemlint.server import Settings, parse_settings

    assert parse_settings({"minConfidence": "medium"}).min_confidence == "medium"
    assert parse_settings({"idemlint": {"min-confidence": "high"}}).min_confidence == "high"
    assert parse_settings({"minConfidence": "bogus"}, Settings(min_confidence="medium")).min_confidence == "medium"
    assert parse_settings(None).min_confidence is None  # as configured: the default view
    assert parse_settings({"minStakes": "external"}).min_stakes == "external"


def test_the_suppress_action_on_a_multi_line_sql_string_goes_after_its_closing_quotes(tmp_path: Path) -> None:
    from test_suppression_placement import SQL, SQL_SUPPRESSED, string_constants

    async def body() -> None:
        root = project(tmp_path)
        async with session(root, {"minConfidence": "low"}) as client:
            uri = client.open_file(root, "orders.py", SQL)
            [diagnostic] = await client.diagnostics(uri)
            assert (diagnostic.code, diagnostic.range.start.line) == ("IDM101", 7)  # `conn.execute("""`
            [suppress] = [a for a in await client.code_actions(uri, diagnostic) if a.title.startswith("Suppress")]
            fixed = apply(SQL, edits_of(suppress, uri))
            assert fixed == SQL_SUPPRESSED  # after the closing quotes: the SQL is untouched
            assert string_constants(fixed) == string_constants(SQL)

            seen = client.count(uri)
            version = client.change(uri, fixed)
            assert await client.diagnostics(uri, lambda p: p.version == version, after=seen) == []

    run(body())


def test_a_suppression_that_cannot_be_written_safely_is_disabled_with_its_reason(tmp_path: Path) -> None:
    from test_suppression_placement import NO_PLACE

    async def actions(root: Path, capabilities: lsp.ClientCapabilities) -> list[lsp.CodeAction]:
        client = Client()
        await client.start_io(sys.executable, "-m", "idemlint.server", cwd=str(root))
        try:
            params = lsp.InitializeParams(capabilities=capabilities, root_uri=root.as_uri())
            await asyncio.wait_for(client.initialize_async(params), WAIT)
            client.initialized(lsp.InitializedParams())
            uri = client.open_file(root, "pay.py", NO_PLACE)
            [diagnostic] = await client.diagnostics(uri)
            return [a for a in await client.code_actions(uri, diagnostic) if a.title.startswith("Suppress")]
        finally:
            if client._server is not None and client._server.returncode is None:
                client._server.kill()
            await client.stop()

    async def body() -> None:
        root = project(tmp_path)
        disabled = lsp.ClientCapabilities(
            text_document=lsp.TextDocumentClientCapabilities(
                code_action=lsp.CodeActionClientCapabilities(disabled_support=True)
            )
        )
        [action] = await actions(root, disabled)
        assert action.edit is None and action.disabled is not None
        assert action.disabled.reason == "cannot add a noqa comment: the statement ends on a line with no code"
        assert await actions(root, lsp.ClientCapabilities()) == []  # a client that would offer it anyway

    run(body())
