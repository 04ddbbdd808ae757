"""`idemlint server`: a Language Server Protocol server on stdio, built on pygls.

Editors get idemlint's findings as diagnostics while the user types (on open, on save, and
debounced on change, from the unsaved buffer), its fixes and a `# noqa` suppression as code
actions, `source.fixAll.idemlint` for every safe fix, and the rule's summary on hover.

Each document is checked as `idemlint check` would check the file: the nearest
`[tool.idemlint]` above it, per-file-ignores, excludes, test and migration skips, `# noqa`.
Settings come from `initializationOptions` (and `workspace/didChangeConfiguration`):
`select` and `ignore` (lists of codes or prefixes, replacing the configured ones as
`--select`/`--ignore` do), `unsafeFixes` (offer unsafe fixes too; off by default) and
`minConfidence` (`low`, `medium`, `high`: hide less sure findings, as `--min-confidence` does).

Analysis runs on one worker thread, off the message loop, so the editor's requests are
answered while a large file is checked; an exception while checking one document is logged
(`window/logMessage`) and the server keeps serving. Results are published only for the
version of the document they were computed from.

The project index (what the project's state setters do, see idemlint.analysis.project) is
built once per project root when a selected rule needs it, kept in memory, and updated when
a Python file is saved or changes on disk (`workspace/didChangeWatchedFiles`, registered
when the client supports it); a change that alters the index re-checks the open documents
of that project.

Run it with `idemlint server` or `python -m idemlint.server`; it needs the `server` extra
(`pip install 'idemlint[server]'`: pygls and lsprotocol).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import traceback
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.server import LanguageServer
from pygls.uris import to_fs_path

from idemlint import DOCS_URL, __version__
from idemlint.analysis.project import EMPTY, ProjectIndex, setter_facts
from idemlint.config import Config, ConfigError, find_pyproject, load_config
from idemlint.finding import Finding
from idemlint.lsp.text import UTF16, LineIndex, code_at, suppress_edit, units
from idemlint.paths import SOURCE, TEST, PathKinds, project_root, resolved
from idemlint.registry import PARSE_ERROR, UNUSED_SUPPRESSION, ReservedCode, enabled_rules, rule_by_code_or_name
from idemlint.rule import Rule

NAME = "idemlint"
DEBOUNCE_SECONDS = 0.3
FIX_ALL = "source.fixAll.idemlint"
# Files whose change can change a document's configuration or test status.
CONFIG_FILES = frozenset({"pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini"})
_PYTHON_SUFFIXES = (".py", ".pyi")

log = logging.getLogger(__name__)
T = TypeVar("T")


# -- settings --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] | None = None  # None: as configured
    ignore: tuple[str, ...] | None = None
    unsafe_fixes: bool = False
    min_confidence: str = "low"  # hide findings less sure than this, as --min-confidence does


def parse_settings(options: object, previous: Settings | None = None) -> Settings:
    """Settings from `initializationOptions` or a `didChangeConfiguration` payload, flat
    (`{"select": [...]}`) or under an `idemlint` key. Unknown keys are ignored."""
    base = previous or Settings()
    if not isinstance(options, dict):
        return base
    nested = options.get(NAME)
    if isinstance(nested, dict):
        options = nested
    unsafe: object = base.unsafe_fixes
    for key in ("unsafeFixes", "unsafe-fixes", "unsafe_fixes"):
        if key in options:
            unsafe = options[key]
    confidence: object = base.min_confidence
    for key in ("minConfidence", "min-confidence", "min_confidence"):
        if key in options:
            confidence = options[key]
    return Settings(
        select=_codes(options["select"]) if "select" in options else base.select,
        ignore=_codes(options["ignore"]) if "ignore" in options else base.ignore,
        unsafe_fixes=unsafe is True,
        min_confidence=str(confidence) if confidence in _CONFIDENCE else base.min_confidence,
    )


_CONFIDENCE = {"low": 0, "medium": 1, "high": 2}


def _codes(value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value if isinstance(value, list) else []
    return tuple(str(item).strip().upper() for item in items if str(item).strip())


# -- how one document is checked ---------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A document's path, configuration, rules and test/migration status."""

    path: str  # what findings show
    config: Config
    rules: tuple[type[Rule], ...]
    kind: str
    anchor: str  # relative to the project root
    excluded: bool = False
    real_path: Path | None = None  # None for a document that is not a file (untitled)


@dataclass(frozen=True)
class Analysis:
    """The findings of one version of one document, with what converting them needs."""

    uri: str
    version: int | None
    text: str
    target: Target
    findings: tuple[Finding, ...]
    index: LineIndex
    diagnostics: tuple[lsp.Diagnostic, ...]
    notes: tuple[str, ...] = ()  # for the log: configuration errors, internal errors of rules

    def span(self, finding: Finding) -> tuple[int, int]:
        """The finding's start and end as character offsets."""
        return _offset(self.index, finding.line, finding.col), _offset(self.index, finding.end_line, finding.end_col)


def _offset(index: LineIndex, line: int, col: int) -> int:
    if line < 1:
        return 0
    if line > index.line_count:
        return len(index.text)
    return min(index.starts[line - 1] + max(col - 1, 0), index.ends[line - 1])


@dataclass
class _ProjectFacts:
    """The project index of one root, as facts per file so that one file can be updated."""

    files: dict[Path, dict[str, bool]] = field(default_factory=dict)
    index: ProjectIndex = EMPTY

    def reduce(self) -> ProjectIndex:
        guarded: dict[str, bool] = {}
        for facts in self.files.values():
            for name, is_guarded in facts.items():
                guarded[name] = guarded.get(name, is_guarded) and is_guarded
        self.index = ProjectIndex(
            frozenset(n for n, g in guarded.items() if g), frozenset(n for n, g in guarded.items() if not g)
        )
        return self.index


class Checker:
    """Everything that touches the disk or the engine. Used from the one worker thread only,
    so its caches need no locks."""

    def __init__(self) -> None:
        self.settings = Settings()
        self._configs: dict[Path, tuple[int, Config]] = {}
        self._kinds: dict[Path, PathKinds] = {}
        self._projects: dict[Path, _ProjectFacts] = {}

    def forget_configuration(self) -> None:
        self._configs.clear()
        self._kinds.clear()

    def target(self, uri: str, notes: list[str]) -> Target:
        fs_path = to_fs_path(uri) if uri.startswith("file:") else None
        if not fs_path:
            config = self._with_settings(Config())
            shown = uri.rsplit("/", 1)[-1] or "untitled.py"
            return Target(uri, config, tuple(enabled_rules(config.selected, config.ignored)), SOURCE, shown)
        path = resolved(Path(fs_path))
        try:
            pyproject = find_pyproject(path)
            config = self._load(pyproject)
        except ConfigError as error:
            notes.append(f"configuration error, checking {path.name} with the defaults: {error}")
            pyproject, config = None, Config()
        config = self._with_settings(config.with_overrides(root=project_root([str(path)], pyproject)))
        if pyproject is not None:
            config = config.with_overrides(source=str(pyproject))
        kinds = self._kinds.get(config.root)
        if kinds is None:
            kinds = self._kinds[config.root] = PathKinds(config.root)
        anchor = kinds.relative(path) or path.name
        return Target(
            str(path),
            config,
            tuple(enabled_rules(config.selected, config.ignored)),
            kinds.kind(path),
            anchor,
            excluded=_excluded(anchor, config),
            real_path=path,
        )

    def _load(self, pyproject: Path | None) -> Config:
        if pyproject is None:
            return Config()
        try:
            stamp = pyproject.stat().st_mtime_ns
        except OSError:
            stamp = -1
        cached = self._configs.get(pyproject)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        config = load_config(pyproject)
        self._configs[pyproject] = (stamp, config)
        return config

    def _with_settings(self, config: Config) -> Config:
        return config.with_overrides(select=self.settings.select, ignore=self.settings.ignore)

    def analyse(self, uri: str, version: int | None, text: str, encoding: str) -> Analysis:
        from idemlint.engine import check_source

        notes: list[str] = []
        target = self.target(uri, notes)
        index = LineIndex(text, encoding)
        if target.excluded:
            return Analysis(uri, version, text, target, (), index, (), tuple(notes))
        project = self.project_index(target) if any(rule.needs_project for rule in target.rules) else EMPTY
        result = check_source(
            text,
            target.path,
            target.config,
            target.rules,
            report_unused_noqa=True,
            kind=target.kind,
            project=project,
            anchor=target.anchor,
        )
        notes.extend(result.errors)
        floor = _CONFIDENCE[self.settings.min_confidence]
        findings = tuple(f for f in result.findings if _CONFIDENCE.get(f.confidence, 2) >= floor)
        diagnostics = tuple(to_diagnostic(finding, index) for finding in findings)
        return Analysis(uri, version, text, target, findings, index, diagnostics, tuple(notes))

    def project_index(self, target: Target) -> ProjectIndex:
        root = target.config.root
        facts = self._projects.get(root)
        if facts is None:
            from idemlint.files import discover

            facts = _ProjectFacts()
            if root.is_dir():
                for path, _shown in discover([str(root)], target.config).files:
                    facts.files[resolved(path)] = _facts_of(path)
            facts.reduce()
            self._projects[root] = facts
        return facts.index

    def update_index(self, paths: Iterable[Path]) -> set[Path]:
        """Re-read these Python files into the indexes built so far; the roots whose index changed."""
        changed: set[Path] = set()
        for path in paths:
            path = resolved(path)
            for root, facts in self._projects.items():
                if not path.is_relative_to(root):
                    continue
                before = facts.index
                if path.is_file():
                    facts.files[path] = _facts_of(path)
                else:
                    facts.files.pop(path, None)
                if facts.reduce() != before:
                    changed.add(root)
        return changed

    def fix_all(self, analysis: Analysis) -> str | None:
        """The document with every safe fix applied, or None when nothing changes."""
        from idemlint.fixes import fix_source

        target = analysis.target
        if target.excluded or (target.kind == TEST and not target.config.check_tests):
            return None
        outcome = fix_source(analysis.text, target.anchor, target.config, target.rules, unsafe=False)
        return outcome.text if outcome.applied and outcome.text != analysis.text else None


def _facts_of(path: Path) -> dict[str, bool]:
    try:
        return setter_facts(path.read_bytes())
    except OSError:
        return {}


def _excluded(anchor: str, config: Config) -> bool:
    """Whether the configuration's `exclude`/`extend-exclude` leave the file out, as
    discovery does for a folder walk."""
    import pathspec

    spec = pathspec.GitIgnoreSpec.from_lines([*config.exclude, *config.extend_exclude])
    return spec.match_file(anchor)


# -- findings to protocol objects ---------------------------------------------------------------

_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning}


def docs_url(code: str, name: str) -> str:
    from idemlint.explain import anchor

    return f"{DOCS_URL}#{anchor(code, name)}"


def to_diagnostic(finding: Finding, index: LineIndex) -> lsp.Diagnostic:
    start = index.from_line_col(finding.line, finding.col)
    end = index.from_line_col(finding.end_line, finding.end_col)
    if end <= start:  # a point (a syntax error's position): one character, so editors can show it
        text = index.line(start[0])
        at = _offset(index, finding.line, finding.col) - index.starts[start[0]]
        end = (start[0], start[1] + units(text[at : at + 1], index.encoding)) if at < len(text) else start
    return lsp.Diagnostic(
        range=_range(start, end),
        message=finding.message,
        severity=_SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Information),
        code=finding.code,
        code_description=lsp.CodeDescription(href=docs_url(finding.code, finding.name)),
        source=NAME,
        tags=[lsp.DiagnosticTag.Unnecessary] if finding.code == UNUSED_SUPPRESSION else None,
        data={"fingerprint": finding.fingerprint, "fixable": finding.fix is not None},
    )


def _range(start: tuple[int, int], end: tuple[int, int]) -> lsp.Range:
    return lsp.Range(start=lsp.Position(*start), end=lsp.Position(*end))


def _text_edit(index: LineIndex, start: int, end: int, replacement: str) -> lsp.TextEdit:
    return lsp.TextEdit(range=_range(index.from_offset(start), index.from_offset(end)), new_text=replacement)


def hover_markdown(rule: type[Rule] | ReservedCode) -> str:
    """The rule's summary and how to fix it: `idemlint explain`, shortened."""
    return (
        f"**{rule.code}** `{rule.name}` ({rule.severity})\n\n{rule.summary}\n\n"
        f"**How to fix it:** {rule.fix_hint}\n\n"
        f"[Documentation]({docs_url(rule.code, rule.name)}) · `idemlint explain {rule.code}`"
    )


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

    @property
    def settings(self) -> Settings:
        return self.checker.settings

    # logging

    def log_message(self, message: str, kind: lsp.MessageType = lsp.MessageType.Info) -> None:
        try:
            self.show_message_log(f"idemlint: {message}", kind)
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

    def is_python(self, uri: str) -> bool:
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return False
        if document.language_id:
            return document.language_id.lower().startswith("python")
        return uri.endswith(_PYTHON_SUFFIXES)

    async def current(self, uri: str) -> Analysis | None:
        """The analysis of the document's current text: cached, or computed now."""
        if not self.is_python(uri):
            return None
        document = self.workspace.text_documents[uri]
        text, version = document.source, document.version
        cached = self.analyses.get(uri)
        if cached is not None and cached.version == version and cached.text == text:
            return cached
        analysis: Analysis = await self.in_worker(self.checker.analyse, uri, version, text, self.encoding())
        for note in analysis.notes:
            if note not in self.reported:
                self.reported.add(note)
                self.log_message(note, lsp.MessageType.Warning)
        if uri in self.workspace.text_documents:
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
        document = self.workspace.text_documents.get(uri)
        if document is None or document.version != analysis.version:
            return  # closed, or changed since: the newer version's check publishes
        self.publish_diagnostics(uri, list(analysis.diagnostics), version=analysis.version)

    def lint_open(self, roots: set[Path] | None = None) -> None:
        """Check the open documents again (those of `roots`, or all)."""
        for uri in list(self.workspace.text_documents):
            analysis = self.analyses.get(uri)
            if roots is None or (analysis is not None and analysis.target.config.root in roots):
                self.analyses.pop(uri, None)
                self.schedule(uri)

    def close(self, uri: str) -> None:
        pending = self.timers.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self.analyses.pop(uri, None)
        self.publish_diagnostics(uri, [])

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
                    edit = lsp.TextEdit(range=_range((0, 0), analysis.index.end()), new_text=fixed)
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
                edits = [_text_edit(index, e.start, e.end, e.replacement) for e in fix.edits]
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
            noqa = suppress_edit(analysis.text, finding.line, finding.code)
            if noqa is not None:
                suppressions.append(
                    lsp.CodeAction(
                        title=f"Suppress {finding.code} on this line",
                        kind=lsp.CodeActionKind.QuickFix,
                        diagnostics=[diagnostic],
                        edit=self.workspace_edit(analysis, [_text_edit(index, *noqa)]),
                    )
                )
        return [action for _, action in sorted(fixes, key=lambda item: item[0])] + suppressions

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
        if analysis is None:
            return None
        index = analysis.index
        line = params.position.line
        offset = index.to_offset(line, params.position.character)
        if 0 <= line < index.line_count:
            code = code_at(index.line(line), offset - index.starts[line])
            rule = rule_by_code_or_name(code) if code else None
            if rule is not None:
                return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=hover_markdown(rule)))
        parts: list[str] = []
        covered: lsp.Range | None = None
        for finding, diagnostic in zip(analysis.findings, analysis.diagnostics, strict=True):
            start, end = analysis.span(finding)
            if not start <= offset <= end or any(f"**{finding.code}**" in part for part in parts):
                continue
            rule = rule_by_code_or_name(finding.code)
            if rule is not None:
                parts.append(hover_markdown(rule))
                covered = covered or diagnostic.range
        if not parts:
            return None
        markdown = "\n\n---\n\n".join(parts)
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown), range=covered)


def create_server() -> IdemlintServer:
    server = IdemlintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: IdemlintServer, params: lsp.InitializeParams) -> None:
        ls.checker.settings = parse_settings(params.initialization_options)
        _warn_unknown_codes(ls)

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
            await ls.register_capability_async(lsp.RegistrationParams(registrations=[registration]))
        except Exception as error:
            ls.log_exception("registering file watchers", error)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: IdemlintServer, params: lsp.DidChangeConfigurationParams) -> None:
        settings = parse_settings(params.settings, ls.settings)
        if settings != ls.settings:
            ls.checker.settings = settings
            _warn_unknown_codes(ls)
            ls.lint_open()

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


def _warn_unknown_codes(ls: IdemlintServer) -> None:
    from idemlint.registry import validate_codes

    unknown = validate_codes([*(ls.settings.select or ()), *(ls.settings.ignore or ())])
    if unknown:
        ls.log_message(f"unknown codes in the settings: {', '.join(unknown)}", lsp.MessageType.Warning)


def serve() -> None:
    """Serve on stdin/stdout until the client says exit. Anything the analysis prints goes to
    stderr: stdout carries the protocol."""
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    server = create_server()
    try:
        server.start_io(stdin, stdout)  # type: ignore[arg-type]  # pygls says TextIO; it takes bytes
    finally:
        server.worker.shutdown(wait=False, cancel_futures=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="idemlint server", description="idemlint's language server, on stdio.")
    parser.add_argument("--stdio", action="store_true", help="accepted for editors that pass it; stdio is the default")
    parser.add_argument("--version", action="version", version=f"idemlint {__version__}")
    parser.parse_args(argv)
    serve()


if __name__ == "__main__":
    main()
