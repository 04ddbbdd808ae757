"""Method chains and what their arguments say: `X.objects.filter(...).update(...)`, `update(T).where(...)`.

The calls of a chain, followed through a variable; whether it is a Django queryset and of
which model; its filters as `Predicate`s; and the kind of a value written or compared
(literal, bool, null, constant, expr).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.db.records import DJANGO_CHAIN, DJANGO_READ_TERMINALS, record_name
from idemlint.analysis.db.scopes import source_order
from idemlint.analysis.model import ModuleModel, string_value
from idemlint.analysis.sql import Predicate
from idemlint.knowledge.locks import LOCKING_KEYWORDS

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

_CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]+$")
_STATE_ENUM = re.compile(r"(Status|State|Stage|Phase|Choices)\.[A-Za-z_]\w*$")
_LOCK_WORDS = ("select_for_update", "with_for_update")


def chain_calls(expr: cst.BaseExpression) -> list[cst.Call]:
    """The calls of a method chain, outermost first (public name for rules)."""
    return _chain(expr)


def _chain(expr: cst.BaseExpression) -> list[cst.Call]:
    """The calls of a method chain, outermost first: `a.filter(x).update(y)` -> [update, filter]."""
    calls = []
    node: cst.BaseExpression = expr
    while True:
        if isinstance(node, cst.Call):
            calls.append(node)
            node = node.func
        elif isinstance(node, cst.Attribute):
            node = node.value
        elif isinstance(node, cst.Subscript):
            node = node.value
        elif isinstance(node, cst.Await):
            node = node.expression
        else:
            return calls


def full_chain(model: ModuleModel, expr: cst.BaseExpression, depth: int = 0) -> list[cst.Call]:
    """`_chain`, continued through a variable: `q = X.objects.filter(id=i, status=s); q.update(...)`
    gives the filter too (the latest assignment of the name before its use)."""
    chain = _chain(expr)
    root = chain_root(expr)
    if depth > 4 or not isinstance(root, cst.Name):
        return chain
    scope = model.scope_of(root)
    position = source_order(model, scope)
    at = position.get(root, 0)
    latest = None
    for binding in model.bindings_of(scope, root.value):
        where = position.get(binding.statement, -1)
        if binding.value is not None and where < at and (latest is None or where > position.get(latest.statement, -1)):
            latest = binding
    if latest is None or latest.kind != "assign" or not isinstance(latest.value, (cst.Call, cst.Attribute, cst.Await)):
        return chain
    return chain + full_chain(model, latest.value, depth + 1)


_MANAGERS = ("objects", "_default_manager", "_base_manager")


def chain_root(expr: cst.BaseExpression) -> cst.BaseExpression:
    """What a chain of calls, attributes and subscripts starts from: `Order` of
    `Order.objects.filter(...)[0]`."""
    node = expr
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)):
        node = node.func if isinstance(node, cst.Call) else node.value
    return node


def is_queryset(model: ModuleModel, expr: cst.BaseExpression, allow_manager: bool = False, depth: int = 0) -> bool:
    """`Model.objects...` or `Model.objects.filter(...)...`, directly or through a variable."""
    if depth > 4:  # `qs = qs.filter(...)` refers to itself
        return False
    dotted_parts = []
    node = expr
    while isinstance(node, (cst.Call, cst.Attribute, cst.Subscript)):
        if isinstance(node, cst.Attribute):
            dotted_parts.append(node.attr.value)
        node = node.func if isinstance(node, cst.Call) else node.value
    if any(p in _MANAGERS for p in dotted_parts):
        methods = [p for p in dotted_parts if p not in _MANAGERS]
        return all(m in DJANGO_CHAIN or m in DJANGO_READ_TERMINALS for m in methods) or allow_manager
    related = next((i for i, p in enumerate(dotted_parts) if p.endswith("_set") and len(p) > 4), None)
    if related is not None and related > 0:
        # a reverse relation's manager (`offer.offerassignment_set.filter(...)`), used as a queryset
        return all(m in DJANGO_CHAIN or m in DJANGO_READ_TERMINALS for m in dotted_parts[:related])
    if isinstance(node, cst.Name) and isinstance(expr, cst.Name):
        for binding in model.bindings_of(model.scope_of(expr), expr.value):
            if (
                binding.value is not None
                and binding.value is not expr
                and is_queryset(model, binding.value, False, depth + 1)
            ):
                return True
    return False


def chain_model(model: ModuleModel, chain: list[cst.Call], depth: int = 0) -> str | None:
    root = chain_root(chain[-1]) if chain else None
    if depth > 4:
        return None
    own = next((a for c in chain for a in _attributes(c.func) if a.attr.value in _MANAGERS), None)
    if own is not None and _names_its_own_class(model, own.value):
        owner = model.enclosing_class(own)  # `type(self).objects`, `self.__class__.objects`, `cls.objects`
        return owner.name.value.lower() if owner is not None and _a_concrete_model(model, owner) else None
    if isinstance(root, cst.Name):
        if root.value[:1].isupper():
            return root.value.lower()
        for binding in model.bindings_of(model.scope_of(root), root.value):
            if binding.value is not None and binding.value is not root:
                inner = _chain(binding.value)
                if inner:
                    return chain_model(model, inner, depth + 1)
                found = chain_root(binding.value)
                if isinstance(found, cst.Name) and found.value[:1].isupper():
                    return found.value.lower()
    if chain:
        attr = chain[-1].func
        while isinstance(attr, cst.Attribute):
            if isinstance(attr.value, cst.Name) and attr.value.value[:1].isupper():
                return attr.value.value.lower()
            if isinstance(attr.value, cst.Attribute) and attr.value.attr.value.endswith("_set"):
                return attr.value.attr.value[: -len("_set")]  # `offer.offerassignment_set`: offerassignment
            attr = attr.value
    return None


def _attributes(node: cst.BaseExpression) -> Iterator[cst.Attribute]:
    """The attributes down an expression's dotted part: `.update`, `.filter`... of one link."""
    while isinstance(node, cst.Attribute):
        yield node
        node = node.value


def _names_its_own_class(model: ModuleModel, expr: cst.BaseExpression) -> bool:
    """`type(self)`, `self.__class__`, or `cls` in a `@classmethod`: the class the method is in."""
    if isinstance(expr, cst.Call):
        return (
            isinstance(expr.func, cst.Name)
            and expr.func.value == "type"
            and len(expr.args) == 1
            and isinstance(expr.args[0].value, cst.Name)
            and expr.args[0].value.value == "self"
        )
    if isinstance(expr, cst.Attribute):
        return expr.attr.value == "__class__" and isinstance(expr.value, cst.Name) and expr.value.value == "self"
    function = model.enclosing_function(expr)
    return (
        isinstance(expr, cst.Name)
        and expr.value == "cls"
        and function is not None
        and any(model.dotted(d.decorator) == "classmethod" for d in function.decorators)
    )


def _a_concrete_model(model: ModuleModel, owner: cst.ClassDef) -> bool:
    """A class with a base and no `abstract = True` in its `Meta`: an abstract model's or a
    mixin's `type(self)` is some subclass, whose keys and table are its own."""
    if not owner.bases:
        return False
    for statement in owner.body.body:
        if isinstance(statement, cst.ClassDef) and statement.name.value == "Meta":
            return not re.search(r"\babstract\s*=\s*True\b", model.module.code_for_node(statement))
    return True


def model_name(model: ModuleModel, expr: cst.BaseExpression) -> str | None:
    """`Order` -> order, `models.Order` -> order, `Order.status` (a column) -> order."""
    dotted = model.dotted(expr)
    if dotted is None:
        return None
    parts = dotted.split(".")
    classes = [p for p in parts if p[:1].isupper()]
    return (classes[-1] if classes else parts[-1]).lower()


def locks(chain: list[cst.Call]) -> bool:
    return any(isinstance(c.func, cst.Attribute) and c.func.attr.value in _LOCK_WORDS for c in chain)


def assigned_name(model: ModuleModel, call: cst.Call) -> str | None:
    """What holds the read's result: a name (`order = ...`), or an attribute of `self` that the
    object then holds (`self.order = Order.objects.get(pk=pk)`)."""
    node: cst.CSTNode = call
    parent = model.parents.get(node)
    while isinstance(parent, (cst.Await, cst.Subscript, cst.SubscriptElement, cst.Index)):
        node, parent = parent, model.parents.get(parent)
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1:
        return record_name(parent.targets[0].target)
    if isinstance(parent, cst.AnnAssign):
        return record_name(parent.target)
    if isinstance(parent, cst.NamedExpr) and isinstance(parent.target, cst.Name):
        return parent.target.value
    return None


def django_predicates(model: ModuleModel, chain: list[cst.Call]) -> list[Predicate]:
    found = []
    for link in chain:
        attr = link.func.attr.value if isinstance(link.func, cst.Attribute) else ""
        if attr in ("filter", "exclude", "get"):
            found.extend(kwarg_predicates(model, link))
    return found


_LOOKUPS = {"exact": "eq", "iexact": "eq", "in": "in", "lt": "lt", "lte": "lt", "gt": "gt", "gte": "gt", "isnull": "is"}
# Every other Django lookup and transform: the column is before it, and it is not equality.
_OTHER_LOOKUPS = set(
    "contains icontains startswith istartswith endswith iendswith range date year iso_year month day week "
    "week_day iso_week_day quarter time hour minute second regex iregex overlap contained_by has_key has_keys "
    "has_any_keys len search trigram_similar unaccent lower upper".split()
)


def kwarg_predicates(model: ModuleModel, call: cst.Call) -> list[Predicate]:
    found = []
    for arg in call.args:
        if arg.keyword is not None:
            parts = arg.keyword.value.lower().split("__")
            op = "eq"
            while len(parts) > 1 and parts[-1] in _LOOKUPS.keys() | _OTHER_LOOKUPS:
                lookup = parts.pop()
                op = _LOOKUPS.get(lookup, "other") if op == "eq" else op
            kind = python_value_kind(model, arg.value)[0]
            value = predicate_value(kind)
            # `order__status=...` constrains a related row, not this one: kept as `order__status`.
            found.append(Predicate("__".join(parts), op, value))
        elif arg.star == "**" and isinstance(arg.value, cst.Name):
            # `filter(**criteria)` where `criteria = {"request_state": PENDING, ...}`, written once
            criteria = model.sole_value(arg.value)
            if isinstance(criteria, cst.Dict) and not _loses_keys(model, arg.value):
                keyed = [
                    cst.Arg(e.value, keyword=cst.Name(key))
                    for e in criteria.elements
                    if isinstance(e, cst.DictElement) and (key := string_value(e.key) or "").isidentifier()
                ]
                found.extend(kwarg_predicates(model, cst.Call(call.func, keyed)))
        else:
            for node in model.iter_nodes(arg.value):  # Q(status="paid") | Q(...)
                if isinstance(node, cst.Call) and (model.call_name(node) or "").endswith("Q"):
                    found.extend(kwarg_predicates(model, node))
    return found


def _loses_keys(model: ModuleModel, name: cst.Name) -> bool:
    """`criteria.pop("status")`, `del criteria["status"]`, `criteria.update(...)`: the dict the
    name holds may lose or change the keys it was written with."""
    scope = model.scope_of(name)
    for node in model.iter_nodes(scope):
        if (
            isinstance(node, cst.Attribute)
            and isinstance(node.value, cst.Name)
            and node.value.value == name.value
            and node.attr.value in ("pop", "popitem", "update", "clear")
        ):
            return True
        if isinstance(node, cst.Del) and any(
            isinstance(n, cst.Name) and n.value == name.value for n in model.iter_nodes(node.target)
        ):
            return True
    return False


def predicate_value(kind: str) -> str:
    return kind if kind in ("bool", "null") else "literal" if kind in ("literal", "constant") else kind


def sa_predicates(model: ModuleModel, call: cst.Call) -> list[Predicate]:
    found = []
    for arg in call.args:
        for node in (arg.value, *model.iter_nodes(arg.value)):
            if isinstance(node, cst.Comparison):
                column = model.dotted(node.left)
                for target in node.comparisons:
                    if column and "." in column:
                        op = (
                            "eq"
                            if isinstance(target.operator, cst.Equal)
                            else "in"
                            if isinstance(target.operator, cst.In)
                            else "ne"
                            if isinstance(target.operator, cst.NotEqual)
                            else "lt"
                        )
                        kind = python_value_kind(model, target.comparator)[0]
                        found.append(
                            Predicate(
                                column.rsplit(".", 1)[-1].lower(),
                                op,
                                predicate_value(kind),
                            )
                        )
            elif (
                isinstance(node, cst.Call)
                and isinstance(node.func, cst.Attribute)
                and node.func.attr.value in ("in_", "is_", "isnot", "is_not", "between", "not_in", "notin_")
            ):
                column = model.dotted(node.func.value)
                op = "ne" if node.func.attr.value in ("not_in", "notin_") else "in"  # `status.not_in(FINAL)`: like `!=`
                if column and "." in column:
                    found.append(Predicate(column.rsplit(".", 1)[-1].lower(), op, "literal"))
    return found


def values_sets(model: ModuleModel, call: cst.Call) -> dict[str, tuple[str, str]]:
    sets = {}
    for arg in call.args:
        if arg.keyword is not None:
            sets[arg.keyword.value.lower()] = python_value_kind(model, arg.value)
        elif isinstance(arg.value, cst.Dict):
            for element in arg.value.elements:
                if isinstance(element, cst.DictElement):
                    key = string_value(element.key) or model.dotted(element.key)
                    if key:
                        sets[key.rsplit(".", 1)[-1].lower()] = python_value_kind(model, element.value)
    return sets


def python_value_kind(model: ModuleModel, expr: cst.BaseExpression, follow: bool = True) -> tuple[str, str]:
    """literal ("paid", 3), bool, null, constant (OrderStatus.PAID), expr (F(), a variable).
    With `follow`, an attribute the function set earlier has the kind of the value it was set to."""
    text = string_value(expr)
    if text is not None:
        return "literal", text
    if isinstance(expr, (cst.Integer, cst.Float)):
        return "literal", expr.value
    if isinstance(expr, cst.Name) and expr.value in ("True", "False"):
        return "bool", expr.value
    if isinstance(expr, cst.Name) and expr.value == "None":
        return "null", "None"
    dotted = model.dotted(expr)
    if dotted is not None and _CONSTANT.match(dotted.rsplit(".", 1)[-1]):
        return "constant", dotted
    if dotted is not None and _STATE_ENUM.search(dotted):
        return "constant", dotted  # `SubscriptionStatus.Active`, `Order.Status.paid`
    assigned = _assigned_before(model, expr) if follow else None
    if assigned is not None:
        return python_value_kind(model, assigned, follow=False)  # one step: `a.x = b.y; b.y = a.x` ends
    return "expr", ""


def _assigned_before(model: ModuleModel, expr: cst.BaseExpression) -> cst.BaseExpression | None:
    """`source.status = QUEUED; ....update(status=source.status)`: the value the attribute was
    given earlier in the same function, when it was given exactly one."""
    if type(expr) is not cst.Attribute or type(expr.value) is not cst.Name:
        return None
    scope = model.scope_of(expr)
    given = [
        (statement, value)
        for target, value, statement in model.attribute_assigns
        if target is not expr
        and target.attr.value == expr.attr.value
        and type(target.value) is cst.Name
        and target.value.value == expr.value.value
        and model.scope_of(target) is scope
    ]
    if len(given) != 1:
        return None
    statement, value = given[0]
    if model.is_inside(expr, statement):
        return None  # `m.role = m.role`: the value is the attribute itself
    position = source_order(model, scope)
    return value if position.get(statement, -1) < position.get(expr, -1) else None


def admitted_values(model: ModuleModel, call: cst.Call) -> dict[str, set[str]]:
    """What each column's filter admits, as written: `is_main=True` -> {"True"}, `status__in=[A,
    B]` -> {"A", "B"}."""
    code = model.module.code_for_node
    found: dict[str, set[str]] = {}
    for link in chain_calls(call):
        if not isinstance(link.func, cst.Attribute) or link.func.attr.value not in ("filter", "get"):
            continue
        for arg in link.args:
            if arg.keyword is None:
                continue
            column, _, lookup = arg.keyword.value.partition("__")
            if lookup == "in" and isinstance(arg.value, (cst.List, cst.Tuple, cst.Set)):
                found.setdefault(column, set()).update(code(e.value) for e in arg.value.elements)
            elif lookup in ("", "exact"):
                found.setdefault(column, set()).add(code(arg.value))
    return found


def locks_by_keyword(call: cst.CSTNode) -> bool:
    """`frappe.get_doc("Invoice", name, for_update=True)`, `session.get(Order, pk,
    with_for_update=True)`: a load that locks the row it gives."""
    return isinstance(call, cst.Call) and any(
        a.keyword is not None
        and a.keyword.value in LOCKING_KEYWORDS
        and not (isinstance(a.value, cst.Name) and a.value.value in ("False", "None"))
        for a in call.args
    )
