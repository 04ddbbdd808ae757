"""Idempotency keys made for retried requests and never sent.

A client may make one key per logical call and reuse it on every attempt (as it should), then
put it in the header named by an attribute (`headers[self._idempotency_header] = key`). Where
nothing in the project gives that attribute a name (this module sets it only to None, and no
file sets it to anything else), the header is never written: the key is never sent, and each
retried write goes without one. The project's part is the header-name attributes some file
sets to something other than None and the files that read each key attribute
(`header_facts`, read by a regular expression); the module's part is the key, where it is made, and every place it could be sent.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

from idemlint._lazy import LazyModule
from idemlint.analysis.db.scopes import source_order
from idemlint.knowledge.keys import KEY_VARIABLE

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
    from idemlint.analysis.project_index import ProjectIndex
    from idemlint.analysis.retry import RetryAnalysis, RetryContext
else:
    cst = LazyModule("libcst", globals(), "cst")

# an attribute that may name a header (`_idempotency_header`, `auth_header_name`): only these
# are recorded for the project, and only these are judged
_HEADER_ATTRIBUTE = re.compile(r"header|idempot", re.IGNORECASE)
# set to something other than a bare None, on a line of its own: an attribute
# (`self._idempotency_header = "Idempotency-Key"`, `... = None if legacy else "Key"`), one of
# several targets (`self._idempotency_header, self._v = ...`), a bare name given anything but
# None or an attribute of `self` (a class body's `retry_header = "X-Retry"`, `= HEADER`; not a
# local `h = self._h`), a keyword given one (`update(_idempotency_header=HEADER)`), a property
# of that name (`def _idempotency_header(self)`), or the name spelt in a string
# (`setattr(client, "name", value)`)
_ATTRIBUTE = rb"(\w*(?:header|idempot)\w*)"
_TYPE = rb"(?::[\w .,\[\]|]{0,80})?"  # an annotation (`: str | None`)
_NOT_NONE = rb"(?![ \t]*None[ \t]*(?:#[^\n]*)?\r?$)"
_NAMED = re.compile(
    rb"^[ \t]*[\w.]{0,200}\."
    + _ATTRIBUTE
    + rb"[ \t]*"
    + _TYPE
    + rb"=(?!=)"
    + _NOT_NONE
    + rb"|^[ \t]*[\w.]{0,200}\."
    + _ATTRIBUTE
    + rb"[ \t]*,[\w., \t]{0,200}=(?!=)"
    + rb"|^[ \t]*"
    + _ATTRIBUTE
    + rb"[ \t]*"
    + _TYPE
    + rb"=(?!=)(?![ \t]*(?:None\b|self\.|cls\.))"
    + rb"|[(,][ \t]*"
    + _ATTRIBUTE
    + rb"[ \t]*=(?!=)(?![ \t]*None\b)"
    + rb"|\bdef[ \t]+"
    + _ATTRIBUTE
    + rb"[ \t]*\("
    + rb"|[\"']"
    + _ATTRIBUTE
    + rb"[\"']",
    re.IGNORECASE | re.MULTILINE,
)
# a key attribute read (`options.idempotency_key`), not stored into: a file other than the one
# that makes the key may send it (a client module that puts it in a header of its own)
_KEY_READ = re.compile(
    rb"\.(\w*(?:" + KEY_VARIABLE.pattern.encode() + rb")\w*)\b(?![ \t]*" + _TYPE + rb"=(?!=))", re.IGNORECASE
)


_CANDIDATE_LINE = re.compile(rb"^[^\n]*(?:header|idem|dedup)[^\n]*", re.IGNORECASE | re.MULTILINE)


class HeaderFacts(NamedTuple):
    """What one file says of key headers, for the project index."""

    named: frozenset[str]  # the header-name attributes it may give a name (`_NAMED`)
    keys_read: frozenset[str]  # the key attributes it reads


NO_HEADER_FACTS = HeaderFacts(frozenset(), frozenset())


def header_facts(source: bytes) -> HeaderFacts:
    """The header-name attributes a file may name and the key attributes it reads."""
    lowered = source.lower()
    if b"header" not in lowered and b"idem" not in lowered and b"dedup" not in lowered:
        return NO_HEADER_FACTS
    lines = b"\n".join(m.group() for m in _CANDIDATE_LINE.finditer(source))  # the rest cannot match
    named = frozenset(next(g for g in m.groups() if g).decode("utf-8", "replace") for m in _NAMED.finditer(lines))
    read = frozenset(m.group(1).decode("utf-8", "replace") for m in _KEY_READ.finditer(lines))
    return HeaderFacts(named, read)


@dataclass(frozen=True)
class UnsentKey:
    made: cst.CSTNode  # the statement that makes the key, once per logical call
    sink: cst.CSTNode  # where it would be put in a header
    attribute: str  # the attribute that names the header
    unset: cst.CSTNode  # where the module sets that attribute to None
    context: RetryContext  # the retry that sends the requests


def unsent_keys(model: ModuleModel, retry: RetryAnalysis, project: ProjectIndex, module: str) -> Iterator[UnsentKey]:
    """Keys the module makes before a retry and puts only in headers no file names. The key's
    class, and the bases and subclasses the module defines for it, are where its sinks and reads
    are looked for; a key another module reads is left alone."""
    unset: dict[str, cst.CSTNode] = {}
    set_otherwise: set[str] = set()
    for target, value, statement in model.attribute_assigns:
        if isinstance(value, cst.Name) and value.value == "None":
            unset.setdefault(target.attr.value, statement)
        else:
            set_otherwise.add(target.attr.value)
    stored = {id(target) for target, _value, _statement in model.attribute_assigns}
    for target, value, statement in model.attribute_assigns:
        key = target.attr.value
        if not KEY_VARIABLE.search(key) or not any(isinstance(n, cst.Call) for n in (value, *model.iter_nodes(value))):
            continue
        family = _family(model, statement)
        sinks = [
            (sink, attribute, id(sink_value))
            for subscript, sink_value, sink in model.subscript_assigns
            if model.enclosing_class(sink) in family
            and isinstance(sink_value, cst.Attribute)
            and sink_value.attr.value == key
            and (attribute := _header_attribute(model, subscript)) is not None
        ]
        dead = [
            (sink, attribute, value_id)
            for sink, attribute, value_id in sinks
            if attribute in unset
            and attribute not in set_otherwise
            and attribute not in project.named_header_attributes
        ]
        if not dead or len(dead) != len(sinks) or project.key_reads.get(key, frozenset()) - {module}:
            continue  # a live sink here, or another file reads the key and may send it
        sink_values = {value_id for _sink, _attribute, value_id in dead}
        sent_otherwise = any(
            isinstance(node, cst.Attribute)
            and node.attr.value == key
            and id(node) not in stored
            and id(node) not in sink_values
            and model.enclosing_class(node) in family
            and not _only_tested(model, node)
            for node in model.iter_nodes(model.module, stop_at_functions=False)
        )  # read where it may be sent: handed to a call, put in a dict
        context = None if sent_otherwise else _retry_after(model, retry, statement)
        if context is not None:
            sink, attribute, _value_id = dead[0]
            yield UnsentKey(statement, sink, attribute, unset[attribute], context)


def _family(model: ModuleModel, node: cst.CSTNode) -> set[cst.ClassDef | None]:
    """The class around a node with the bases of it the module defines and their subclasses
    here, generic ones too (`BaseClient[httpx.Client]`); None stands for the module level."""
    by_name = {c.name.value: c for c in model.classes}
    related: dict[cst.ClassDef, set[cst.ClassDef]] = {c: set() for c in model.classes}
    for subclass in model.classes:
        for base in subclass.bases:
            named = base.value.value if isinstance(base.value, cst.Subscript) else base.value  # `Base[T]`
            if isinstance(named, cst.Name) and named.value in by_name:
                related[subclass].add(by_name[named.value])
                related[by_name[named.value]].add(subclass)
    found: set[cst.ClassDef | None] = set()
    pending = [model.enclosing_class(node)]
    while pending:
        current = pending.pop()
        if current not in found:
            found.add(current)
            if current is not None:
                pending.extend(related[current])
    return found


def _header_attribute(model: ModuleModel, subscript: cst.Subscript) -> str | None:
    """The attribute that names the header a subscript store writes: `headers[self.h]`, or
    `headers[h]` where every binding of `h` is `self.h_attr`."""
    elements = subscript.slice
    if len(elements) != 1 or not isinstance(elements[0].slice, cst.Index):
        return None
    name = elements[0].slice.value
    values: list[cst.BaseExpression] = [name]
    if isinstance(name, cst.Name):
        bindings = model.bindings_of(model.scope_of(subscript), name.value)
        values = [b.value for b in bindings if b.value is not None]
        if not values or len(values) != len(bindings):
            return None
    attributes = {v.attr.value for v in values if isinstance(v, cst.Attribute)}
    if len(attributes) != 1 or len(values) != sum(isinstance(v, cst.Attribute) for v in values):
        return None
    attribute = attributes.pop()
    return attribute if _HEADER_ATTRIBUTE.search(attribute) else None


def _only_tested(model: ModuleModel, node: cst.Attribute) -> bool:
    """The key read only to test it (`if options.idempotency_key is None`, `if h and key:`)."""
    for ancestor in model.ancestors(node):
        if isinstance(ancestor, (cst.If, cst.While)):
            return model.is_inside(node, ancestor.test)
        if isinstance(ancestor, (cst.Call, cst.Dict, cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            return False
    return False


def _retry_after(model: ModuleModel, retry: RetryAnalysis, statement: cst.CSTNode) -> RetryContext | None:
    """A retry loop of the same function after the statement: the key made once for its attempts."""
    function = model.enclosing_function(statement)
    order = source_order(model, function) if function is not None else {}
    for context in retry.contexts:
        if (
            context.kind in ("loop", "iterator")
            and not context.repeats_safely
            and model.enclosing_function(context.node) is function
            and not model.is_inside(statement, context.node)
            and order.get(statement, -1) < order.get(context.node, -1)
        ):
            return context
    return None
