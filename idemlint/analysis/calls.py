"""Which function a call runs, as a dotted name the project index can look up.

`send(order)` after `from shop.mail import send` is `shop.mail.send`; `self._client.post()`
where `__init__` did `self._client = ApiClient()` is `shop.client.ApiClient.post`;
`self.charge()` is the enclosing class's `charge` (the index walks the bases when the class
does not define it). A receiver whose class cannot be seen stays unknown, with one
convention: a parameter or attribute named after exactly one class of the project
(`api_client` for `ApiClient`) is taken for an instance of it, written `~api_client.post`
for the index to settle. Nothing is ever matched by method name alone.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")

CONVENTION = "~"


def module_name(relative_path: str, source_roots: tuple[str, ...] = ("src",)) -> str:
    """`shop/orders/models.py` -> `shop.orders.models`; `pkg/__init__.py` -> `pkg`; a file
    under a source root (`src/shop/x.py`, or `lib/python/shop/x.py` with `src = ["lib/python"]`)
    drops it, as the installed package is named."""
    parts = list(PurePosixPath(relative_path.replace("\\", "/")).with_suffix("").parts)
    for root in sorted(source_roots, key=len, reverse=True):
        prefix = [p for p in PurePosixPath(root.replace("\\", "/")).parts if p not in ("", ".")]
        if prefix and len(parts) > len(prefix) and parts[: len(prefix)] == prefix:
            parts = parts[len(prefix) :]
            break
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p not in ("", "."))


def absolute(dotted: str, module: str, is_package: bool = False) -> str:
    """Make a relative import's name (`..errors.ApiError`) absolute from the importing module."""
    if not dotted.startswith("."):
        return dotted
    level = len(dotted) - len(dotted.lstrip("."))
    package = module.split(".") if is_package else module.split(".")[:-1]
    if level > 1:
        package = package[: len(package) - (level - 1)]
    rest = dotted[level:]
    return ".".join([*package, rest] if rest else package)


def call_target(model: ModuleModel, call: cst.Call, module: str) -> str | None:
    """The dotted name of the function `call` runs, or None when it cannot be known."""
    func = call.func
    if isinstance(func, cst.Name):
        return _name(model, func, module)
    if not isinstance(func, cst.Attribute):
        return None
    method = func.attr.value
    receiver = func.value
    if isinstance(receiver, cst.Name) and receiver.value in ("self", "cls"):
        owner = model.enclosing_class(call)
        return f"{module}.{owner.name.value}.{method}" if owner is not None else None
    if isinstance(receiver, cst.Attribute) and isinstance(receiver.value, cst.Name) and receiver.value.value == "self":
        owner = model.enclosing_class(call)
        kind = _attribute_class(model, owner, receiver.attr.value, module) if owner is not None else None
        return f"{kind}.{method}" if kind else None
    if isinstance(receiver, cst.Call):  # `ApiClient().post()`, `clients.ApiClient().post()`
        kind = _value_class(model, receiver, module)
        return f"{kind}.{method}" if kind else None
    if isinstance(receiver, cst.Name):
        kind = _instance_class(model, receiver, module)
        if kind:
            return f"{kind}.{method}"
    dotted = model.dotted(func)
    head = (dotted or "").split(".")[0]
    if dotted and head in model.imports and not model._shadowed(func, head):
        return absolute(model.qualname(func) or dotted, module, model.is_package)
    return None


def is_class_name(dotted: str) -> bool:
    """`shop.client.ApiClient`: by the convention that classes are capitalised."""
    return dotted.rsplit(".", 1)[-1][:1].isupper()


def _name(model: ModuleModel, name: cst.Name, module: str) -> str | None:
    """A function or class of this module, or an imported one; None for a local variable."""
    value = name.value
    scope = model.scope_of(name)
    if scope is not model.module and model.bindings_of(scope, value):
        return None
    if value in model.module_defs:
        return f"{module}.{value}"
    imported = model.imports.get(value)
    if imported and all(b.kind == "import" for b in model.bindings_of(model.module, value)):
        return absolute(imported, module, model.is_package)
    return None


def class_bases(model: ModuleModel, owner: cst.ClassDef, module: str) -> tuple[str, ...]:
    """The class's bases as dotted names (imported ones made absolute), and the interfaces
    it declares it implements (zope's `@implementer(IHelpDesk)`)."""
    bases = []
    declared = [
        arg
        for decorator in owner.decorators
        if isinstance(decorator.decorator, cst.Call)
        and (model.dotted(decorator.decorator.func) or "").rsplit(".", 1)[-1] == "implementer"
        for arg in decorator.decorator.args
    ]
    for arg in (*owner.bases, *declared):
        if arg.keyword is not None:
            continue
        resolved = class_named(model, arg.value, module)
        if resolved:
            bases.append(resolved)
    return tuple(bases)


def class_named(model: ModuleModel, value: cst.BaseExpression, module: str) -> str | None:
    """The dotted name an expression naming a class refers to (`Base`, `tasks.Base`), or None.
    An optional dependency's base (`BrazeClient or object`, where `BrazeClient = None` if the
    import fails) names the imported class."""
    if isinstance(value, cst.BooleanOperation) and isinstance(value.operator, cst.Or):
        value = value.left
    if isinstance(value, cst.Name):
        found = _name(model, value, module)
        imported = model.imports.get(value.value)
        if found is None and imported and model.scope_of(value) is model.module:
            bindings = model.bindings_of(model.module, value.value)
            if all(b.kind == "import" or _is_none(b.value) for b in bindings):
                return absolute(imported, module, model.is_package)
        return found
    dotted = model.qualname(value)
    return absolute(dotted, module, model.is_package) if dotted else None


def _attribute_class(model: ModuleModel, owner: cst.ClassDef, attribute: str, module: str) -> str | None:
    """`self._client = ApiClient()` (or `= client` of a parameter named like a class) in a
    method of the class: the attribute's class."""
    found: str | None = None
    for value in self_attribute_values(model).get((id(owner), attribute), ()):
        kind = _value_class(model, value, module)
        if kind is None or found is not None and kind != found:
            return None  # assigned two different things: unknown
        found = kind
    return found


def self_attribute_values(model: ModuleModel) -> dict[tuple[int, str], list[cst.BaseExpression]]:
    """The values each class assigns to each `self.<attribute>`, indexed once per module."""
    index: dict[tuple[int, str], list[cst.BaseExpression]] | None = model.memo.get("calls.self_assigns")
    if index is None:
        index = {}
        for target, value, _statement in model.attribute_assigns:
            if isinstance(target.value, cst.Name) and target.value.value == "self":
                owner = model.enclosing_class(target)
                if owner is not None:
                    index.setdefault((id(owner), target.attr.value), []).append(value)
        model.memo["calls.self_assigns"] = index
    return index


# Service lookups by interface: Pyramid's `request.find_service(IHelpDesk)`, zope's `getUtility`.
_LOOKUPS = frozenset({"find_service", "getUtility", "queryUtility", "get_utility", "query_utility"})


def _value_class(model: ModuleModel, value: cst.BaseExpression, module: str) -> str | None:
    if isinstance(value, cst.Call) and tail_name(value.func) in _LOOKUPS:
        wanted = next((a for a in value.args if a.keyword is None or a.keyword.value == "iface"), None)
        kind = class_named(model, wanted.value, module) if wanted is not None else None
        return kind if kind and is_class_name(kind) else None  # the interface: its implementations run
    loaded = _loaded_model(model, value, module)
    if loaded is not None:
        return loaded
    if isinstance(value, cst.Call) and isinstance(value.func, (cst.Name, cst.Attribute)):
        kind = _name(model, value.func, module) if isinstance(value.func, cst.Name) else None
        if kind is None and isinstance(value.func, cst.Attribute):
            dotted = model.qualname(value.func)
            head = (model.dotted(value.func) or "").split(".")[0]
            kind = absolute(dotted, module, model.is_package) if dotted and head in model.imports else None
        return kind if kind and is_class_name(kind) else None
    if isinstance(value, cst.Name):
        scope = model.scope_of(value)
        bindings = model.bindings_of(scope, value.value)
        if bindings and all(b.kind == "param" for b in bindings):
            annotated = bindings[0].annotation
            if annotated is not None:
                return _annotation_class(model, annotated, module)
            return f"{CONVENTION}{value.value}"
    return None


def _annotation_class(model: ModuleModel, annotation: cst.BaseExpression, module: str) -> str | None:
    if isinstance(annotation, cst.Name):
        kind = _name(model, annotation, module)
    elif isinstance(annotation, cst.Attribute):
        dotted = model.qualname(annotation)
        kind = absolute(dotted, module, model.is_package) if dotted else None
    else:
        return None
    return kind if kind and is_class_name(kind) else None


def _instance_class(model: ModuleModel, receiver: cst.Name, module: str) -> str | None:
    """`client = ApiClient(); client.post()`, `client: ApiClient`, a module-level singleton
    (`psp = PspClient()`), a class used directly (`ApiClient.create()`), or a parameter named
    like a class (`api_client`, by the convention `~api_client` the index resolves)."""
    scope = model.scope_of(receiver)
    bindings = model.bindings_of(scope, receiver.value) or (
        model.bindings_of(model.module, receiver.value) if scope is not model.module else []
    )
    if not bindings:
        target = model.module_defs.get(receiver.value)
        return f"{module}.{receiver.value}" if isinstance(target, cst.ClassDef) else None
    kinds = set()
    for binding in bindings:
        if binding.kind == "import":
            return None
        if binding.annotation is not None:
            kinds.add(_annotation_class(model, binding.annotation, module))
        elif binding.kind == "param":
            # a parameter named like a class (`retry_config`): the one project class of that name
            kinds.add(f"{CONVENTION}{receiver.value}")
        elif binding.value is not None:
            value = binding.value
            if isinstance(value, cst.Await):
                value = value.expression
            kinds.add(_value_class(model, value, module) if isinstance(value, cst.Call) else None)
        else:
            kinds.add(None)
    if len(kinds) == 1:
        return kinds.pop()
    return None


def tail_name(func: cst.BaseExpression) -> str:
    """`send` of `send`, `mail.send` (the called name's last part); "" for anything else."""
    return func.value if isinstance(func, cst.Name) else func.attr.value if isinstance(func, cst.Attribute) else ""


def _is_none(value: cst.BaseExpression | None) -> bool:
    return isinstance(value, cst.Name) and value.value == "None"


# Manager and queryset methods that return one instance of the model
_ONE_ROW = frozenset({"get", "first", "last", "latest", "earliest", "aget", "afirst", "alast"})


def _loaded_model(model: ModuleModel, value: cst.BaseExpression, module: str) -> str | None:
    """`Order.objects.get(pk=pk)`, `Order.objects.filter(...).first()`,
    `get_object_or_404(Order, pk=pk)`: an instance of `Order`."""
    if isinstance(value, cst.Await):
        value = value.expression
    if not isinstance(value, cst.Call):
        return None
    if tail_name(value.func) == "get_object_or_404" and value.args:
        kind = class_named(model, value.args[0].value, module)
        return kind if kind and is_class_name(kind) else None
    if not isinstance(value.func, cst.Attribute) or value.func.attr.value not in _ONE_ROW:
        return None
    node: cst.BaseExpression = value.func.value
    while isinstance(node, (cst.Call, cst.Attribute)):
        if isinstance(node, cst.Attribute) and node.attr.value in ("objects", "_default_manager"):
            kind = class_named(model, node.value, module)
            return kind if kind and is_class_name(kind) else None
        node = node.func if isinstance(node, cst.Call) else node.value
    return None
