"""What a round of a loop sends: a write (a writing HTTP method, a verb that makes, sends, stores
or moves something), or only reads (a query that selects, a sender handed a reading method)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel, local_callee, positional_parameters, string_value
from idemlint.analysis.retry.chains import gives_a_receiver
from idemlint.analysis.sql import only_reads, sql_text
from idemlint.knowledge.http import READ_METHODS, WRITE_METHOD_FUNCTIONS, WRITE_METHODS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def sends_a_write_among(model: ModuleModel, nodes: Iterable[cst.CSTNode]) -> bool:
    """Some call among `nodes` sends a write, itself or through a function of this module."""
    return any(isinstance(n, cst.Call) and writes_here_or_in_helper(model, n) for n in nodes)


def writes_here_or_in_helper(model: ModuleModel, call: cst.Call) -> bool:
    """The call sends a write, or runs a function of this module that does (`_file_report()`).
    A link of a chain whose helper only makes what the next call is made on, and keeps it
    (`self.get_cinder().get_snapshot(id)`, `get_cinder` running `self.cinder = self.create_cinder()`
    the first time), sends nothing itself; one that returns a write's answer does
    (`self._order_request().json()`). A helper handed a `SELECT` (`self._execute(SELECT_ROW,
    ...)`) runs that read: what it sends with the statement, or with what it made of it
    (`future = make_future(statement)`, then `future.send_request()`), is the read; any other
    write it sends (an `INSERT` of its own) is one."""
    if sends_a_write(model, call):
        return True
    helper = local_callee(model, call)
    if helper is None:
        return False
    link = gives_a_receiver(model, call, helper.name.value)
    statement = _statement_and_derived(model, helper) if _only_selects(model, call) else set()
    return any(
        isinstance(n, cst.Call)
        and sends_a_write(model, n)
        and not (link and _kept_on_the_instance(model, n))
        and not model.names_read(n) & statement
        for n in model.iter_nodes(helper.body)
    )


def _statement_and_derived(model: ModuleModel, helper: cst.FunctionDef) -> set[str]:
    """The helper's first parameter (the statement it is handed) and the names it binds from it."""
    params = positional_parameters(model, helper)
    derived = set(params[:1])
    for node in model.iter_nodes(helper.body):
        if isinstance(node, cst.Assign) and model.names_read(node.value) & derived:
            derived |= {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
    return derived


def _kept_on_the_instance(model: ModuleModel, call: cst.Call) -> bool:
    """`self.cinder = self.create_cinder()`: a client made once and kept."""
    parent = model.parents.get(call)
    return isinstance(parent, cst.Assign) and all(isinstance(t.target, cst.Attribute) for t in parent.targets)


def sends_a_write(model: ModuleModel, call: cst.Call) -> bool:
    """A call that sends or stores something: a writing HTTP method or verb (`post`, `create`,
    `send`...), or `session.request("POST", url)`; not an `execute` of a query that only reads
    (`cursor.execute("SELECT ...")`, also through a name bound to the text), nor a sender handed
    a method that reads (`send_rest_api(method=path, request_type="get")`)."""
    if _WRITING.search((model.call_name(call) or "").rsplit(".", 1)[-1]):
        return not _only_selects(model, call) and not _handed_a_read_method(model, call)
    return any((string_value(arg.value) or "").upper() in WRITE_METHODS for arg in call.args)


def _handed_a_read_method(model: ModuleModel, call: cst.Call) -> bool:
    """`send_rest_api(method=path, request_type=request_type)` with `request_type = "get"` bound
    once before it, or `self._send("HEAD", url)`: a generic sender told to read, by the argument
    that names the method (a `method=`, `request_type=`, `http_method=` or `verb=` keyword, or
    the first positional one); never a call named for a writing method (`client.post("options")`
    posts to a path)."""
    name = (model.call_name(call) or "").rsplit(".", 1)[-1].lower()
    if name in WRITE_METHOD_FUNCTIONS:
        return False
    given = [a.value for a in call.args if a.keyword is not None and a.keyword.value in _METHOD_KEYWORDS]
    given += [a.value for a in call.args[:1] if a.keyword is None]
    for value in given:
        if isinstance(value, cst.Name):
            value = model.sole_value(value) or value
        if (string_value(value) or "").upper() in READ_METHODS:
            return True
    return False


_METHOD_KEYWORDS = frozenset({"method", "request_type", "http_method", "verb"})


def _only_selects(model: ModuleModel, call: cst.Call) -> bool:
    """`execute("SELECT ... FROM ...")`, also through a name every binding of which is such
    text: a read (`sql.only_reads` says which statements change nothing)."""
    if not call.args or call.args[0].keyword is not None:
        return False
    given = call.args[0].value
    values: list[cst.BaseExpression | None] = [given]
    if isinstance(given, cst.Name):
        bindings = model.resolve(model.scope_of(given), given.value)
        values = [b.value if b.kind == "assign" else None for b in bindings]
    texts = [sql_text(model, v) if v is not None else None for v in values]
    return bool(texts) and all(t is not None and only_reads(t) for t in texts)


# what a function that writes calls: a writing HTTP method or a verb that makes, sends,
# stores or moves something
_WRITING = re.compile(
    rf"^({'|'.join(sorted(WRITE_METHOD_FUNCTIONS))}|create|send|submit|charge|execute|enqueue|publish|save|commit|"
    r"refund|transfer|pay|capture|cancel|update|insert|write|upload|order)(_\w+)?$"
)
