"""Everything the rules share about one file, each analysis computed at most once."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.analysis.project_index import EMPTY, ProjectIndex
from idemlint.analysis.setter_facts import by_verdict, setter_facts

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.db import DbAnalysis
    from idemlint.analysis.effects import EffectAnalysis
    from idemlint.analysis.keys import KeySinks
    from idemlint.analysis.policy import PolicyAnalysis
    from idemlint.analysis.retry import RetryAnalysis
    from idemlint.analysis.status_errors import ProjectRaisers
    from idemlint.analysis.summaries import Callee, ModuleSummaries
    from idemlint.config import Config
else:
    cst = LazyModule("libcst", globals(), "cst")


class FileContext:
    def __init__(
        self, path: str, source: str, module: cst.Module, config: Config, project: ProjectIndex = EMPTY
    ) -> None:
        self.path = path
        self.source = source
        self.module = module
        self.config = config
        self.model = ModuleModel(module, config.vocabulary, path.endswith("__init__.py"))
        self.model.module_aliases = project.module_aliases
        self._project = project

    @property
    def indexed(self) -> bool:
        """Whether the run built the project's index: without it, what other files do is unknown."""
        return self._project is not EMPTY

    @cached_property
    def project(self) -> ProjectIndex:
        """The project index, or (for a file checked alone, as flake8 does) this module's own facts."""
        if self._project is not EMPTY:
            return self._project
        from idemlint.analysis.managers import join_manager_filters, join_related_names, model_facts

        facts = setter_facts(self.source, self.model.vocabulary)
        unique_keys, versioned, (managers, declared), related, private = model_facts(self.source)
        return ProjectIndex(
            *by_verdict(facts),
            unique_keys=unique_keys,
            versioned_models=frozenset(model for model, is_versioned in versioned.items() if is_versioned),
            manager_filters=join_manager_filters([managers], [declared]),
            related_managers=join_related_names([related]),
            private_columns=private,
        )

    @cached_property
    def retry(self) -> RetryAnalysis:
        from idemlint.analysis.calls import call_target, class_named
        from idemlint.analysis.retry import InheritedSettings, RetryAnalysis
        from idemlint.analysis.retry.reach import QuietNames
        from idemlint.knowledge.retries import THREAD_CLASSES

        project, module, quiet = self._project, self.module_name, self._quiet_functions
        if not (
            project.task_settings
            or project.task_retriers
            or quiet
            or project.retry_decorators
            or project.thread_classes
        ):
            return RetryAnalysis(self.model)

        def of_base(base: cst.BaseExpression) -> frozenset[str]:
            owner = class_named(self.model, base, module)
            return project.inherited_settings(owner) if owner else frozenset()

        def retries_task_at(call: cst.Call) -> int | None:
            target = call_target(self.model, call, module)
            return project.task_retriers.get(project.defined_as(target)) if target else None

        def retry_decorator(decorator: cst.BaseExpression) -> str | None:
            named = self.model.qualname(decorator)
            return project.retry_decorators.get(project.defined_as(named)) if named else None

        local = {c.name.value: c for c in self.model.classes if self.model.scope_of(c) is self.model.module}

        def thread_class(owner: cst.ClassDef, depth: int = 0) -> bool:  # by its bases: its module may not be indexed
            for base in owner.bases:
                if isinstance(base.value, cst.Name) and base.value.value in local and depth < 8:
                    if thread_class(local[base.value.value], depth + 1):
                        return True
                    continue
                named = class_named(self.model, base.value, module)
                if named in THREAD_CLASSES or project.defined_as(named or "") in project.thread_classes:
                    return True
            return False

        names = QuietNames(quiet, module, project.defined_as)
        settings = InheritedSettings(of_base, retries_task_at, names, retry_decorator, thread_class)
        return RetryAnalysis(self.model, settings)

    @cached_property
    def _quiet_functions(self) -> frozenset[str]:
        """The functions that let no exception out: the project's, or this module's own when
        it is checked alone."""
        if self._project is not EMPTY:
            return self._project.quiet_functions
        from idemlint.analysis.quiet_functions import join_quiet, quiet_facts

        return join_quiet([quiet_facts(self.source, self.module_name)])

    @cached_property
    def sinks(self) -> KeySinks:
        from idemlint.analysis.keys import KeySinks

        return KeySinks(self.model, self.model.vocabulary.key_names)

    @cached_property
    def policies(self) -> PolicyAnalysis:
        from idemlint.analysis.calls import call_target
        from idemlint.analysis.policy import PolicyAnalysis

        project, module = self._project, self.module_name

        def retry_class(call: cst.Call) -> frozenset[str] | None:
            if not project.retry_config_classes:
                return None
            target = call_target(self.model, call, module)
            return project.retry_config_classes.get(project.defined_as(target)) if target else None

        return PolicyAnalysis(self.model, self.retry, self.callee, self._raisers, retry_class)

    @property
    def _raisers(self) -> ProjectRaisers | None:
        """The project's functions that may let an HTTP status error out, and whether a call
        runs one of its functions whose module it has no summary of (none without an index)."""
        from idemlint.analysis.calls import call_target
        from idemlint.analysis.status_errors import ProjectRaisers

        project, module = self._project, self.module_name
        if project is EMPTY:
            return None
        package = module.split(".", 1)[0]

        def unknown_project_call(call: cst.Call) -> bool:
            """`load_product(sku)` or `catalog.load_product(sku)`, imported from a project module
            that has no summary; not a method of a model (`Asset.objects.get(...)`)."""
            func = call.func
            named = func.value if isinstance(func, cst.Attribute) else func
            if not isinstance(named, cst.Name) or named.value not in self.model.imports:
                return False
            target = call_target(self.model, call, module)
            if not target or target.split(".", 1)[0] != package or project.function(target) is not None:
                return False
            prefix = target.rsplit(".", 1)[0] + "."
            return not any(name.startswith(prefix) for name in project.functions)

        return ProjectRaisers(project.function_names("raises_status_error"), unknown_project_call)

    @cached_property
    def effects(self) -> EffectAnalysis:
        from idemlint.analysis.effects import EffectAnalysis

        return EffectAnalysis(self.model, self.sinks, self.config)

    @cached_property
    def role(self) -> str:
        """What the file is (`paths.ROLES`), by its path and its code (`analysis/programs.py`)."""
        from idemlint.analysis.programs import file_role

        return file_role(self.model, self.path)

    @cached_property
    def program_run_by_hand(self) -> bool:
        """A program a person runs, one watched client: a script or management command by its
        path, or a file run as a program (a `__main__` block, a loop at module level) wherever
        it lives. Not an example module, which users copy into their services."""
        from idemlint.analysis.programs import runs_as_program

        return self.role in ("script", "management command") or runs_as_program(self.model)

    @cached_property
    def run_by_hand(self) -> bool:
        """The file is code a person runs one at a time, or test support: a script, example or
        management command by its path, or a program or test support by its code."""
        from idemlint.paths import RUN_BY_HAND

        return self.role in (*RUN_BY_HAND, "test")

    @cached_property
    def module_name(self) -> str:
        """This file's dotted module name, from its path relative to the project root."""
        from pathlib import Path

        from idemlint.analysis.calls import module_name

        relative = self.path
        if self._project.root:
            try:
                relative = Path(self.path).resolve().relative_to(self._project.root).as_posix()
            except ValueError:
                pass
        return module_name(relative, self.config.src)

    @cached_property
    def summaries(self) -> ModuleSummaries:
        """What each function does that its callers inherit, followed through calls."""
        from idemlint.analysis.summaries import summarise

        project = self._project if self._project is not EMPTY else None
        return summarise(
            self.model, self.retry, self.sinks, self.effects, self.module_name, project, db=lambda: self._own_db
        )

    def callee(self, call: cst.Call) -> Callee | None:
        """The function `call` runs and its summary, in this module or (with a project index)
        elsewhere in the project."""
        from idemlint.analysis.summaries import callee_of

        project = self._project if self._project is not EMPTY else None
        return callee_of(self.model, call, self.summaries, self.module_name, project)

    @cached_property
    def db(self) -> DbAnalysis:
        """The file's reads and writes, with the states its calls to model methods write
        (`order.ship()`, from the method's summary)."""
        from idemlint.analysis.db import DbAnalysis
        from idemlint.analysis.db.chains import python_value_kind
        from idemlint.analysis.summary_records import bound_argument

        # only a function that writes a state on its own instance or on the one it is given
        # can be one: by name, before the (costly) summaries of this module are asked; here, a
        # function that assigns to an attribute of a bare name (see direct_facts.state_writes)
        assigning = {
            self.model.scope_of(statement)
            for target, _value, statement in self.model.attribute_assigns
            if type(target.value) is cst.Name
        }
        writers = (
            self.project.function_names("state_chain")
            | self.project.function_names("built_chain")
            | {function.name.value.lower() for function in self.model.functions if function in assigning}
        )

        from idemlint.analysis.db.records import BUILT

        def state_written_by(call: cst.Call) -> tuple[str, str, str, str, bool] | None:
            called = call.func.attr if isinstance(call.func, cst.Attribute) else call.func
            if not isinstance(called, cst.Name) or called.value.lower() not in writers:
                return None
            callee = self.callee(call)
            if callee is None:
                return None
            written, owner_name = callee.summary.writes_state, callee.summary.state_owner
            if written is None and callee.summary.builds_on:  # `account.add_credits(n)`: a sum on the old value
                written, owner_name = (callee.summary.builds_on[0], BUILT, ""), callee.summary.built_owner
            if written is None:
                return None
            if owner_name == "self":
                owner = call.func.value if isinstance(call.func, cst.Attribute) else None
            elif any(arg.star for arg in call.args):
                return None  # `set_status(*extra, n)`: which argument the helper is given is unknown
            else:
                owner = bound_argument(call, callee.summary, owner_name)
            if not isinstance(owner, cst.Name):
                return None
            column, kind, text = written
            if kind == BUILT:
                return owner.value, column, kind, text, False  # judged where the row was loaded
            if kind != "param":
                return owner.value, column, kind, text, True  # the function's own literal: judged there
            argument = bound_argument(call, callee.summary, text)
            found = python_value_kind(self.model, argument) if argument is not None else ("expr", "")
            return owner.value, column, found[0], found[1], False

        return DbAnalysis(self.model, self.config, self.project, state_written_by)

    @cached_property
    def _own_db(self) -> DbAnalysis:
        """The reads and writes written in this file alone, for the summaries (which the
        full analysis reads)."""
        from idemlint.analysis.db import DbAnalysis

        return DbAnalysis(self.model, self.config, self.project)
