"""How the language server checks one document: as `idemlint check` would check the file.

The nearest configuration above the file, per-file-ignores, excludes, test and migration
skips and `# noqa` all apply, through the same idemlint.api functions the CLI calls. The
server keeps, per project root, the configuration (until a configuration file changes) and
the project index as facts per file, so that saving one file updates the index without
re-reading the project. The index reads only inside the workspace folders: a document outside
all of them, or not a file at all (`untitled:`), is checked alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from idemlint import api
from idemlint.analysis.project import FileFacts, reduce_facts
from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.config import Config, ConfigError, load_config
from idemlint.finding import Finding
from idemlint.lsp.convert import to_diagnostic
from idemlint.lsp.settings import Settings
from idemlint.lsp.text import LineIndex, suppress_edit
from idemlint.paths import SOURCE, TEST, PathKinds, resolved
from idemlint.per_file import is_excluded
from idemlint.registry import enabled_rules
from idemlint.rule import Rule


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
    scope: Path | None = None  # the folder its project index reads; None: checked alone


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
    noqa: dict[tuple[int, str], tuple[int, int, str] | str | None] = field(default_factory=dict, compare=False)

    def suppression(self, line: int, code: str) -> tuple[int, int, str] | str | None:
        """The suppress action's edit, or why there is none; worked out once per version, as
        editors ask for code actions at every move of the cursor."""
        if (line, code) not in self.noqa:
            self.noqa[line, code] = suppress_edit(self.text, line, code)
        return self.noqa[line, code]

    def span(self, finding: Finding) -> tuple[int, int]:
        """The finding's start and end as character offsets."""
        return self.index.offset_of(finding.line, finding.col), self.index.offset_of(finding.end_line, finding.end_col)


@dataclass
class ProjectFacts:
    """The project index of one root, as facts per file so that one file can be updated."""

    config: Config
    files: dict[Path, FileFacts] = field(default_factory=dict)
    index: ProjectIndex = EMPTY
    kinds: PathKinds | None = None

    def read(self, path: Path) -> None:
        if self.kinds is None:
            self.kinds = PathKinds(self.config.root)
        facts = api.map_file(path, self.config, self.kinds)
        if facts is None:
            self.files.pop(path, None)
        else:
            self.files[path] = facts

    def reduce(self) -> ProjectIndex:
        self.index = reduce_facts(self.files.values(), self.config.root)
        return self.index


class Checker:
    """Everything that touches the disk or the engine. Used from the one worker thread only,
    so its caches need no locks."""

    def __init__(self) -> None:
        self.settings = Settings()
        self._configs: dict[Path, tuple[int, Config]] = {}
        self._kinds: dict[Path, PathKinds] = {}
        self._projects: dict[Path, ProjectFacts] = {}

    def forget_configuration(self) -> None:
        self._configs.clear()
        self._kinds.clear()

    def target(self, uri: str, notes: list[str], folders: Sequence[Path] = ()) -> Target:
        """What `idemlint check` would make of the file; `folders` (resolved) bound its index."""
        fs_path = to_fs_path(uri) if uri.startswith("file:") else None
        if not fs_path:
            config = self._with_settings(Config())
            shown = uri.rsplit("/", 1)[-1] or "untitled.py"
            return Target(uri, config, tuple(enabled_rules(config.selected, config.ignored)), SOURCE, shown)
        path = resolved(Path(fs_path))
        try:
            config = api.load_config([str(path)], read=self._load)
        except ConfigError as error:
            notes.append(f"configuration error, checking {path.name} with the defaults: {error}")
            config = api.load_config([str(path)], isolated=True)
        config = self._with_settings(config)
        kinds = self._kinds.get(config.root)
        if kinds is None:
            kinds = self._kinds[config.root] = PathKinds(config.root)
        kind, anchor = api.kind_and_anchor(path, config, kinds)
        anchor = anchor or path.name
        return Target(
            str(path),
            config,
            tuple(enabled_rules(config.selected, config.ignored)),
            kind,
            anchor,
            excluded=is_excluded(anchor, config),
            real_path=path,
            scope=index_scope(path, config.root, folders),
        )

    def _load(self, pyproject: Path | None) -> Config:
        """The configuration file, read again only when it has changed on disk."""
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

    def analyse(
        self, uri: str, version: int | None, text: str, encoding: str, folders: Sequence[Path] = ()
    ) -> Analysis:
        notes: list[str] = []
        target = self.target(uri, notes, folders)
        index = LineIndex(text, encoding)
        if target.excluded:
            return Analysis(uri, version, text, target, (), index, (), tuple(notes))
        wanted = target.scope is not None and any(rule.needs_project for rule in target.rules)
        project = self.project_index(target) if wanted else EMPTY
        config, rules = target.config, target.rules
        result = api.check_text(text, target.path, config, rules, target.kind, target.anchor, project)
        notes.extend(result.errors)
        shown = api.visible(
            self.settings.min_confidence or config.min_confidence, self.settings.min_stakes or config.min_stakes
        )
        findings = tuple(filter(shown, result.findings))
        diagnostics = tuple(to_diagnostic(finding, index) for finding in findings)
        return Analysis(uri, version, text, target, findings, index, diagnostics, tuple(notes))

    def project_index(self, target: Target) -> ProjectIndex:
        """The index of the document's scope: its whole project, or the workspace folder inside it."""
        scope, config = target.scope, target.config
        if scope is None:
            return EMPTY
        facts = self._projects.get(scope)
        if facts is None:
            facts = ProjectFacts(config)
            if scope == config.root:
                paths = api.project_files(config)
            else:
                paths = [real for real, _shown in api.discover_files([str(scope)], config).entries]
            for path in paths:
                facts.read(resolved(Path(path)))
            facts.reduce()
            self._projects[scope] = facts
        return facts.index

    def update_index(self, paths: Iterable[Path]) -> set[Path]:
        """Re-read these Python files into the indexes built so far; the scopes whose index changed."""
        changed: set[Path] = set()
        for path in paths:
            path = resolved(path)
            for scope, facts in self._projects.items():
                if not path.is_relative_to(scope):
                    continue
                before = facts.index
                if path.is_file():
                    facts.read(path)
                else:
                    facts.files.pop(path, None)
                if facts.reduce() != before:
                    changed.add(scope)
        return changed

    def fix_all(self, analysis: Analysis) -> str | None:
        """The document with every safe fix applied, or None when nothing changes."""
        target = analysis.target
        if target.excluded or (target.kind == TEST and not target.config.check_tests):
            return None
        outcome = api.fix_text(analysis.text, target.anchor, target.config, target.rules, unsafe=False)
        return outcome.text if outcome.applied and outcome.text != analysis.text else None


def index_scope(path: Path, root: Path, folders: Sequence[Path]) -> Path | None:
    """The folder a document's project index may read: its project root when a workspace folder
    holds it; else the innermost workspace folder that holds the document (a monorepo opened at
    one package); None, checked alone, for a document outside every workspace folder."""
    holding = [folder for folder in folders if path.is_relative_to(folder)]
    if not holding:
        return None
    if any(root.is_relative_to(folder) for folder in holding):
        return root
    inner = max(holding, key=lambda folder: len(folder.parts))
    return inner if inner.is_relative_to(root) else None
