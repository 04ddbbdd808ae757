"""`idemlint server`: a Language Server Protocol server on stdio, built on pygls.

Editors get idemlint's findings as diagnostics while the user types (on open, on save, and
debounced on change, from the unsaved buffer), its fixes and a `# noqa` suppression as code
actions, `source.fixAll.idemlint` for every safe fix, and the rule's summary on hover.

Each document is checked as `idemlint check` would check the file: the nearest
`[tool.idemlint]` above it, per-file-ignores, excludes, test and migration skips, `# noqa`
(idemlint.lsp.checker, through idemlint.api as the CLI). Settings: idemlint.lsp.settings;
bad ones are logged (`window/logMessage`).

Analysis runs on one worker thread, off the message loop, so the editor's requests are
answered while a large file is checked; an exception while checking one document is logged
(`window/logMessage`) and the server keeps serving. Results are published only for the
version of the document they were computed from.

The project index (what the project's state setters do, see idemlint.analysis.project) is
built once per project root when a selected rule needs it, kept in memory, and updated when
a Python file is saved or changes on disk (`workspace/didChangeWatchedFiles`, registered
when the client supports it); a change that alters the index re-checks the open documents
of that project. It reads only inside the workspace folders: an `untitled:` buffer or a file
outside them is checked alone, so opening one never walks a home folder. The process ends as
soon as the client says `exit` or closes stdin, even while an index is being built.

Run it with `idemlint server` or `python -m idemlint.server`; it needs the `server` extra
(`pip install 'idemlint[server]'`: pygls and lsprotocol).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import os
import sys
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from idemlint import __version__
from idemlint.config import CONFIG_FILES as CONFIGURATIONS
from idemlint.lsp.checker import Analysis, Checker
from idemlint.lsp.convert import suppress_action, text_edit, to_range
from idemlint.lsp.hover import hover_at
from idemlint.lsp.settings import NAME, Settings, parse_settings
from idemlint.lsp.text import UTF16
from idemlint.paths import PYTEST_INI_FILES, resolved
from idemlint.registry import PARSE_ERROR, UNUSED_SUPPRESSION

__all__ = ["IdemlintServer", "Settings", "create_server", "main", "parse_settings", "serve"]

DEBOUNCE_SECONDS = 0.3
FIX_ALL = "source.fixAll.idemlint"
# Files whose change can change a document's configuration or test status.
CONFIG_FILES = frozenset(CONFIGURATIONS) | {name for name, _section in PYTEST_INI_FILES}
_PYTHON_SUFFIXES = (".py", ".pyi")

log = logging.getLogger(__name__)


# -- the server ---------------------------------------------------------------------------------


class IdemlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(NAME, __version__, max_workers=2)
        self.checker = Checker()
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="idemlint-check")
        self.analyses: dict[str, Analysis] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}
        self.running: set[asyncio.Task[None]] = set()
        self.reported: set[str] = set()  # notes already logged, so a bad pyproject is said once
        self._folders: tuple[tuple[str, ...], tuple[Path, ...]] = ((), ())

    @property
    def settings(self) -> Settings:
        return self.checker.settings

    # logging

    def log_message(self, message: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        try:
            self.window_log_message(lsp.LogMessageParams(type=kind, message=f"idemlint: {message}"))
        except Exception:  # the transport is gone: nothing to tell
            log.exception("cannot log %s", message)

    def log_exception(self, what: str, error: BaseException) -> None:
        trace = "".join(traceback.format_exception(type(error), error, error.__traceback__))
        self.log_message(f"{what} failed: {type(error).__name__}: {error}\n{trace}", lsp.MessageType.Error)

    # running work off the loop

    async def in_worker(self, function: Any, *args: Any) -> Any:
        return await asyncio.get_running_loop().run_in_executor(self.worker, function, *args)

    def encoding(self) -> str:
        try:
            encoding = self.workspace.position_encoding
        except RuntimeError:  # before initialize
            return UTF16
        return str(encoding or UTF16)

    def folders(self) -> tuple[Path, ...]:
        """The workspace folders (or the root, from a client without folders), resolved."""
        try:
            workspace = self.workspace
        except RuntimeError:  # before initialize
            return ()
        uris = tuple(folder.uri for folder in workspace.folders.values()) or (workspace.root_uri or "",)
        if uris != self._folders[0]:
            paths = [to_fs_path(uri) for uri in uris if uri.startswith("file:")]
            self._folders = (uris, tuple(resolved(Path(path)) for path in paths if path))
        return self._folders[1]

    def document(self, uri: str) -> TextDocument | None:
        """The open document `uri` (pygls keys them by the unquoted URI; publish under `uri`)."""
        return self.workspace.text_documents.get(unquote(uri))

    def python_document(self, uri: str) -> TextDocument | None:
        """The open document `uri` if it is Python (by its language, else by its name)."""
        document = self.document(uri)
        if document is None:
            return None
        if document.language_id:
            return document if document.language_id.lower().startswith("python") else None
        return document if uri.endswith(_PYTHON_SUFFIXES) else None

    async def current(self, uri: str) -> Analysis | None:
        """The analysis of the document's current text: cached, or computed now."""
        document = self.python_document(uri)
        if document is None:
            return None
        text, version = document.source, document.version
        cached = self.analyses.get(uri)
        if cached is not None and cached.version == version and cached.text == text:
            return cached
        analysis: Analysis = await self.in_worker(
            self.checker.analyse, uri, version, text, self.encoding(), self.folders()
        )
        for note in analysis.notes:
            if note not in self.reported:
                self.reported.add(note)
                self.log_message(note, lsp.MessageType.Warning)
        if self.document(uri) is not None:
            self.analyses[uri] = analysis
        return analysis

    # diagnostics

    def schedule(self, uri: str, delay: float = 0.0) -> None:
        """Check the document after `delay` seconds; a newer call replaces a pending one."""
        pending = self.timers.pop(uri, None)
        if pending is not None:
            pending.cancel()
        loop = asyncio.get_running_loop()
        if delay <= 0:
            self._start(uri)
        else:
            self.timers[uri] = loop.call_later(delay, self._start, uri)

    def _start(self, uri: str) -> None:
        self.timers.pop(uri, None)
        task = asyncio.get_running_loop().create_task(self.lint(uri))
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def lint(self, uri: str) -> None:
        try:
            analysis = await self.current(uri)
        except Exception as error:
            self.log_exception(f"checking {uri}", error)
            return
        if analysis is None:
            return
        document = self.document(uri)
        if document is None or document.version != analysis.version:
            return  # closed, or changed since: the newer version's check publishes
        self.publish(uri, list(analysis.diagnostics), analysis.version)

    def publish(self, uri: str, diagnostics: list[lsp.Diagnostic], version: int | None = None) -> None:
        params = lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        self.text_document_publish_diagnostics(params)

    def lint_open(self, scopes: set[Path] | None = None) -> None:
        """Check the open documents again (those indexed from `scopes`, or all)."""
        for uri in [document.uri for document in self.workspace.text_documents.values()]:
            analysis = self.analyses.get(uri)
            if scopes is None or (analysis is not None and analysis.target.scope in scopes):
                self.analyses.pop(uri, None)
                self.schedule(uri)

    def close(self, uri: str) -> None:
        pending = self.timers.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.analyses.pop(uri, None)
        self.publish(uri, [])

    async def files_changed(self, paths: Sequence[Path]) -> None:
        """Saved or changed on disk: configuration files reset the caches, Python files update
        the project indexes; the open documents they can affect are checked again."""
        try:
            if any(path.name in CONFIG_FILES for path in paths):
                await self.in_worker(self.checker.forget_configuration)
                self.lint_open()
                return
            python = [path for path in paths if path.suffix in _PYTHON_SUFFIXES]
            if python:
                changed: set[Path] = await self.in_worker(self.checker.update_index, python)
                if changed:
                    self.lint_open(changed)
        except Exception as error:
            self.log_exception("updating the project index", error)

    # code actions

    async def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        uri = params.text_document.uri
        analysis = await self.current(uri)
        if analysis is None:
            return None
        only = params.context.only

        def wanted(kind: str) -> bool:
            return only is None or any(kind == o or kind.startswith(f"{o}.") for o in only)

        actions: list[lsp.CodeAction] = []
        if wanted(lsp.CodeActionKind.QuickFix):
            actions.extend(self.quick_fixes(analysis, params.range))
        if wanted(FIX_ALL):
            # Asked for by name (on save), or offered beside the quick fixes when there is work.
            asked = only is not None
            if asked or any(f.fix is not None and f.fix.safe for f in analysis.findings):
                fixed = await self.in_worker(self.checker.fix_all, analysis)
                if fixed is not None:
                    edit = lsp.TextEdit(range=to_range((0, 0), analysis.index.end()), new_text=fixed)
                    actions.append(
                        lsp.CodeAction(
                            title="idemlint: apply all safe fixes",
                            kind=FIX_ALL,
                            edit=self.workspace_edit(analysis, [edit]),
                        )
                    )
        return actions

    def quick_fixes(self, analysis: Analysis, requested: lsp.Range) -> list[lsp.CodeAction]:
        index = analysis.index
        low = index.to_offset(requested.start.line, requested.start.character)
        high = index.to_offset(requested.end.line, requested.end.character)
        fixes: list[tuple[int, lsp.CodeAction]] = []
        suppressions: list[lsp.CodeAction] = []
        offered: set[tuple[int, str]] = set()
        for finding, diagnostic in zip(analysis.findings, analysis.diagnostics, strict=True):
            start, end = analysis.span(finding)
            if start > high or end < low:
                continue
            fix = finding.fix
            if fix is not None and (fix.safe or self.settings.unsafe_fixes):
                edits = [text_edit(index, e.start, e.end, e.replacement) for e in fix.edits]
                title = f"{finding.code}: {fix.description}" + ("" if fix.safe else " (unsafe)")
                action = lsp.CodeAction(
                    title=title,
                    kind=lsp.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    edit=self.workspace_edit(analysis, edits),
                    is_preferred=fix.safe or None,
                )
                fixes.append((0 if fix.safe else 1, action))
            if finding.code in (PARSE_ERROR, UNUSED_SUPPRESSION) or (finding.line, finding.code) in offered:
                continue  # neither can be suppressed by a comment
            offered.add((finding.line, finding.code))
            noqa = analysis.suppression(finding.line, finding.code)
            if isinstance(noqa, tuple):
                edit = self.workspace_edit(analysis, [text_edit(index, *noqa)])
                suppressions.append(suppress_action(finding.code, diagnostic, edit))
            elif isinstance(noqa, str) and self.shows_disabled():  # else the client would offer it
                suppressions.append(suppress_action(finding.code, diagnostic, noqa))
        return [action for _, action in sorted(fixes, key=lambda item: item[0])] + suppressions

    def shows_disabled(self) -> bool:
        """Whether the client shows a disabled action with its reason (else it gets none)."""
        document = self.client_capabilities.text_document
        return bool(document and document.code_action and document.code_action.disabled_support)

    def workspace_edit(self, analysis: Analysis, edits: list[lsp.TextEdit]) -> lsp.WorkspaceEdit:
        capabilities = self.client_capabilities.workspace
        versioned = bool(capabilities and capabilities.workspace_edit and capabilities.workspace_edit.document_changes)
        if versioned:
            document = lsp.OptionalVersionedTextDocumentIdentifier(uri=analysis.uri, version=analysis.version)
            return lsp.WorkspaceEdit(document_changes=[lsp.TextDocumentEdit(text_document=document, edits=list(edits))])
        return lsp.WorkspaceEdit(changes={analysis.uri: list(edits)})

    # hover

    async def hover(self, params: lsp.HoverParams) -> lsp.Hover | None:
        analysis = await self.current(params.text_document.uri)
        return None if analysis is None else hover_at(analysis, params.position)


def create_server() -> IdemlintServer:
    server = IdemlintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: IdemlintServer, params: lsp.InitializeParams) -> None:
        problems: list[str] = []
        ls.checker.settings = parse_settings(params.initialization_options, problems=problems)
        _warn_settings(ls, problems)  # logMessage is allowed while initializing

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: IdemlintServer, params: lsp.InitializedParams) -> None:
        capabilities = ls.client_capabilities.workspace
        watch = capabilities and capabilities.did_change_watched_files
        if not (watch and watch.dynamic_registration):
            return
        watchers = [lsp.FileSystemWatcher(glob_pattern=f"**/{name}") for name in ("*.py", "*.pyi", *CONFIG_FILES)]
        registration = lsp.Registration(
            id="idemlint-watched-files",
            method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
        )
        try:
            await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[registration]))
        except Exception as error:
            ls.log_exception("registering file watchers", error)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: IdemlintServer, params: lsp.DidChangeConfigurationParams) -> None:
        problems: list[str] = []
        settings = parse_settings(params.settings, ls.settings, problems)
        changed = settings != ls.settings
        if changed:
            ls.checker.settings = settings
            ls.lint_open()
        _warn_settings(ls, problems, codes=changed)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: IdemlintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: IdemlintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, DEBOUNCE_SECONDS)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE, lsp.SaveOptions(include_text=False))
    async def did_save(ls: IdemlintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.analyses.pop(uri, None)  # the configuration on disk may have changed meanwhile
        ls.schedule(uri)
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path:
            await ls.files_changed([Path(path)])

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: IdemlintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        ls.close(params.text_document.uri)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def did_change_watched_files(ls: IdemlintServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        paths = [Path(p) for p in (to_fs_path(change.uri) for change in params.changes) if p]
        await ls.files_changed(paths)

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL], resolve_provider=False),
    )
    async def code_action(ls: IdemlintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        try:
            return await ls.code_actions(params)
        except Exception as error:
            ls.log_exception(f"code actions for {params.text_document.uri}", error)
            return None

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: IdemlintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        try:
            return await ls.hover(params)
        except Exception as error:
            ls.log_exception(f"hover in {params.text_document.uri}", error)
            return None

    return server


def _warn_settings(ls: IdemlintServer, problems: list[str], codes: bool = True) -> None:
    """Bad settings, told in the client's log (`window/logMessage`) rather than silently ignored."""
    from idemlint.registry import validate_codes

    for problem in problems:
        ls.log_message(f"bad setting: {problem}", lsp.MessageType.Warning)
    unknown = [] if not codes else validate_codes([*(ls.settings.select or ()), *(ls.settings.ignore or ())])
    if unknown:
        ls.log_message(f"unknown codes in the settings: {', '.join(unknown)}", lsp.MessageType.Warning)


def serve() -> None:
    """Serve on stdin/stdout until `exit` or end of input, then end at once (0 after `shutdown`,
    else 1): an index build still running would hold the interpreter's exit until it finished.
    Anything the analysis prints goes to stderr: stdout carries the protocol."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    server = create_server()
    try:
        server.start_io(stdin, stdout)
    finally:
        server.worker.shutdown(wait=False, cancel_futures=True)
    code = 0 if getattr(server.protocol, "_shutdown", False) else 1
    with contextlib.suppress(Exception):
        sys.stderr.flush()  # the protocol's writes flush themselves
    os._exit(code)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="idemlint server", description="idemlint's language server, on stdio.")
    parser.add_argument("--stdio", action="store_true", help="accepted for editors that pass it; stdio is the default")
    parser.add_argument("--version", action="version", version=f"idemlint {__version__}")
    parser.parse_args(argv)
    serve()


if __name__ == "__main__":
    main()
