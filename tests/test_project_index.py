"""The project index: what a helper in another module does decides its callers' findings."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from idemlint.analysis.module_names import nested_package_names, package_reexports
from idemlint.analysis.project import build_index
from idemlint.analysis.setter_facts import setter_facts, weaker
from idemlint.cli import cli

PROJECT = Path(__file__).parent / "data" / "project_index"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    copy = tmp_path / "project"
    shutil.copytree(PROJECT, copy)
    monkeypatch.chdir(copy)
    return copy


def findings(*args: str) -> list[tuple[str, int, str]]:
    result = CliRunner().invoke(cli, ["check", "--format", "json", "--exit-zero", "--min-confidence", "low", *args])
    assert result.exit_code == 0, result.output
    return [(f["path"], f["line"], f["code"]) for f in json.loads(result.stdout)]


def test_setter_facts_see_guards_and_extensions() -> None:
    facts = setter_facts((PROJECT / "shop" / "models.py").read_bytes())
    assert facts == {"set_status": "guarded", "change_status": "unguarded"}
    assert build_index([PROJECT / "shop" / "models.py"]).guarded_setters == frozenset({"set_status"})


def test_a_guarded_setter_in_another_module_keeps_its_callers_quiet(project: Path) -> None:
    # `job.set_status("failed")` goes through Job.set_status, which returns when the job is complete
    assert findings("--no-cache") == [("jobs/tasks.py", 10, "IDM103")]


def test_a_one_file_run_sees_the_whole_project(project: Path) -> None:
    assert findings("--no-cache", "jobs/tasks.py") == findings("--no-cache")


def test_editing_the_helper_rechecks_its_callers_on_a_warm_cache(project: Path) -> None:
    assert findings() == [("jobs/tasks.py", 10, "IDM103")]
    models = project / "shop" / "models.py"
    models.write_text(models.read_text().replace("        if self.complete:\n            return\n", ""))
    assert findings() == [("jobs/tasks.py", 5, "IDM103"), ("jobs/tasks.py", 10, "IDM103")]


def test_a_function_re_exported_under_other_names_is_known_by_each() -> None:
    """`renamed_as` feeds the pre-filter's call words and the cache's digests: a package that
    re-exports `claim` as `take`, and another that re-exports that as `grab`, both spell it."""
    from idemlint.analysis.project_index import renamed_as

    reexports = {
        "shop.orders.take": "shop.orders.claims.claim",
        "shop.grab": "shop.orders.take",
        "shop.orders.Client": "shop.orders.client.Client",  # the same name: nothing renamed
    }
    assert renamed_as(reexports) == {"claim": {"take", "grab"}, "take": {"grab"}}


def test_a_file_whose_facts_raise_is_left_out_and_the_index_goes_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """One file cannot stop the run: a bug its source triggers in the map leaves that file's
    facts out (its own check then reports the internal error) and the other files in."""
    import idemlint.analysis.module_facts
    from idemlint.analysis.project import FileFacts, file_facts
    from idemlint.config import Config

    source = b"import requests\n\ndef pay():\n    return requests.post('https://x')\n"
    healthy = file_facts(source, Path("shop/pay.py"), config=Config(), relative="shop/pay.py")
    assert healthy.summaries is not None

    def broken(*args: object, **kwargs: object) -> None:
        raise TypeError("'SimpleStatementSuite' object is not iterable")

    monkeypatch.setattr(idemlint.analysis.module_facts, "module_facts", broken)
    assert file_facts(source, Path("shop/pay.py"), config=Config(), relative="shop/pay.py") == FileFacts()


def test_module_aliases_are_read_at_module_level_only() -> None:
    """`import trio as event_loop` at the top of a module or in its `try:` names the library
    for other modules; an import inside a function does not (it is local to the call)."""
    from idemlint.analysis.module_names import module_aliases

    source = (
        b"import sys\n"
        b"try:\n"
        b"    import trio as event_loop\n"
        b"except ImportError:\n"
        b"    import asyncio as event_loop\n"
        b"\n"
        b"def real_clock():\n"
        b"    import time as clock\n"
        b"    return clock\n"
        b"import numpy as np\r\n"
    )
    assert module_aliases(source, "pkg/compat.py") == {"pkg.compat.event_loop": "trio", "pkg.compat.np": "numpy"}


def test_a_package_nested_in_a_plain_folder_is_named_from_its_own_top() -> None:
    """`st2common/st2common/exceptions/workflow.py` is imported as `st2common.exceptions.workflow`:
    the outer folder has no `__init__.py`. Not renamed: a package at the top (already so named),
    a name a module of the project has itself, the package's own top (its name is a prefix of
    the result), and a name two nested packages would both take."""
    modules = {
        "core.core": True,
        "core.core.errors": False,
        "core.core.db": True,
        "core.core.db.rows": False,
        "app": True,
        "app.views": False,
        "tools.scripts.run": False,
        "shop.shop": True,
        "shop.shop.models": False,
        "shop.models": False,
        # two projects' `common` package: which one `from common import errors` means is unknown
        "svc_a.common": True,
        "svc_a.common.errors": False,
        "svc_b.common": True,
        "svc_b.common.errors": False,
    }
    assert nested_package_names(modules) == {
        "core.errors": "core.core.errors",
        "core.db": "core.core.db",
        "core.db.rows": "core.core.db.rows",
    }


def test_a_lazy_package_re_exports_what_it_imports_for_type_checking() -> None:
    """A package that imports on first use (a module `__getattr__`) names its exports in an `if
    TYPE_CHECKING:` block; one without `__getattr__` re-exports nothing from there."""
    guarded = b"import typing\nif typing.TYPE_CHECKING:\n    from .retries import retry\n"
    lazy = guarded + b"def __getattr__(name):\n    return name\n"
    assert package_reexports(lazy, "acme/utils/__init__.py") == {"acme.utils.retry": "acme.utils.retries.retry"}
    assert package_reexports(guarded, "acme/utils/__init__.py") == {}


def test_a_setter_handed_its_record_is_guarded_only_by_a_refusal_that_leaves() -> None:
    validated = (
        b"class OrderService:\n"
        b"    def update_status(cls, order, new):\n"
        b"        try:\n"
        b"            current = Order.objects.select_for_update().values_list('status').get(pk=order.pk)\n"
        b"            order.status = current\n"
        b"            if new not in ALLOWED[order.status]:\n"
        b"                raise InvalidTransition(new)\n"
        b"            order.status = new\n"
        b"            order.save()\n"
        b"        except InvalidTransition:\n"
        b"            raise\n"
    )
    assert setter_facts(validated) == {"update_status": "guarded"}
    converted = (  # the argument converted is no re-read: the write comes before any test
        b"class OrderService:\n"
        b"    def change_status(cls, order, new):\n"
        b"        new = OrderStatus(new)\n"
        b"        order.status = new\n"
        b"        if not order.pk:\n"
        b"            return order\n"
        b"        order.save()\n"
    )
    assert setter_facts(converted) == {"change_status": "unguarded"}
    swallowed = validated.replace(b"            raise\n", b"            log.warning('odd move')\n")
    assert setter_facts(swallowed) == {"update_status": "unguarded"}  # the refusal does not leave


def test_a_setter_by_name_that_writes_no_state_is_stateless_unless_it_may() -> None:
    """A `set_status` that sets a flag and writes a file keeps no state; one that writes through
    `setattr`, a query's `update()`, another setter or `super()` may, and one definition that
    writes makes the name a writer."""
    flag = (
        b"class Search:\n"
        b"    def set_status(self, value):\n"
        b"        if value == 'done':\n"
        b"            self.finished = True\n"
        b"            self.save()\n"
        b"        self.write_file({'status': value})\n"
        b"    def write_file(self, progress):\n"
        b"        with open(self.path, 'w') as out:\n"
        b"            out.write(str(progress))\n"
    )
    assert setter_facts(flag) == {"set_status": "stateless"}
    assert setter_facts(flag + b"\nclass Job:\n    def set_status(self, v):\n        self.status = v\n") == {
        "set_status": "unguarded"
    }
    # writes spelt out (setattr, an update, another setter, the parent's, a related record's
    # state), and no proof of writing nothing: a helper of its own that writes, one it inherits,
    # a JSON field, a camelCase column, a call handed the record, another object's write
    for body in (
        b"        setattr(self, 'status', value)\n",
        b"        Search.objects.filter(pk=self.pk).update(status=value)\n",
        b"        self.mark_state(value)\n",
        b"        super().save_status(value)\n",
        b"        self.job.payment_status = value\n",
        b"        self._apply(value)\n    def _apply(self, value):\n        self.status = value\n",
        b"        self.apply_inherited(value)\n",
        b"        self.data['state'] = value\n",
        b"        self.ticketStatus = value\n",
        b"        apply_status(self, value)\n",
        b"        frappe.db.set_value('Search', self.pk, 'status', value)\n",
        b"        self.store.write(self.pk, value)\n",
        b"        self['status'] = value\n",
        b"        (lambda: setattr(self, 'status', value))()\n",
    ):
        source = b"class Search:\n    def set_status(self, value):\n" + body
        assert setter_facts(source) == {"set_status": "unguarded"}, body
    # a stub says nothing: what the real definitions do decides
    for stub in (
        b"        ...\n",
        b'        "Set it."\n        raise NotImplementedError\n',
        b'        raise NotImplementedError("subclasses set the status")\n',
    ):
        assert setter_facts(b"class Base:\n    def set_status(self, value):\n" + stub) == {}, stub
    assert weaker("stateless", "guarded") == "guarded"
    assert weaker("stateless", "stateless") == "stateless"
    assert weaker("guarded", "unguarded") == "unguarded"


def test_a_setter_that_returns_as_if_done_on_a_repeat_skips_repeats() -> None:
    """`if new == self.status: return` answers a repeat as a move made. A refusal
    (`raise`) or an answer (`return False`) lets the caller tell; so does a test of another value."""
    head = b"class Order:\n    def set_status(self, new):\n        old = self.status\n"
    tail = b"        self.status = new\n        self.save()\n"
    refusal = b"        if new not in MOVES.get(old, ()):\n            raise ValueError(new)\n"
    skip = b"        if new == old:\n            return\n"
    assert setter_facts(head + skip + refusal + tail) == {"set_status": "skips-repeats"}
    assert setter_facts(head + b"        if old is new:\n            return None\n" + refusal + tail) == {
        "set_status": "skips-repeats"
    }
    # the skip alone refuses no move back: unguarded
    assert setter_facts(head + skip + tail) == {"set_status": "unguarded"}
    # a test of the state asked for against the one held refuses no other move, whatever it does
    for guard in (
        b"        if new == old:\n            raise ValueError(new)\n",
        b"        if new == old:\n            return False\n",
        b"        if old is new:\n            return self\n",
    ):
        assert setter_facts(head + guard + tail) == {"set_status": "unguarded"}, guard
    # beside a refusal, one that raises or answers lets the caller tell: guarded, not skipping
    raised = b"        if new == old:\n            raise ValueError(new)\n"
    assert setter_facts(head + raised + refusal + tail) == {"set_status": "guarded"}
    assert setter_facts(head + b"        if old == 'paid':\n            return\n" + tail) == {"set_status": "guarded"}
    assert weaker("skips-repeats", "guarded") == "skips-repeats"
    assert weaker("skips-repeats", "unguarded") == "unguarded"


def test_a_file_in_python_3_14_syntax_still_gives_its_setters() -> None:
    # `except A, B:` (PEP 758) makes an older interpreter's `ast` refuse the whole file: its
    # setters, callers and locks would be lost to the project index (libcst reads it)
    source = (
        b"class Job:\n"
        b"    def set_status(self, new):\n"
        b"        if self.complete:\n"
        b"            return\n"
        b"        self.status = new\n"
        b"        self.save()\n\n"
        b"def parse(text):\n"
        b"    try:\n"
        b"        return int(text)\n"
        b"    except LookupError, ValueError:\n"
        b"        return None\n"
    )
    assert setter_facts(source) == {"set_status": "guarded"}
