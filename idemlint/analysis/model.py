"""One walk over the module that every rule shares.

The walk records parents, imports, functions, calls, loops, assignments and returns, so
rules look facts up instead of re-walking the tree (each Python-level walk of a libcst
tree costs about as much as the parse itself). Import aliases come from the module's own
import statements: cheaper than libcst's full scope analysis and enough for the dotted
names the rules match.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Union

from idemlint._lazy import LazyModule
from idemlint.analysis.imports import record_import, record_import_from, record_late_import
from idemlint.analysis.syntax import children_of as children_of
from idemlint.analysis.syntax import iter_nodes as iter_nodes
from idemlint.analysis.syntax import keyword as keyword
from idemlint.analysis.syntax import load_syntax_types, syntax_children, walk_nodes
from idemlint.analysis.syntax import positional as positional
from idemlint.analysis.syntax import string_value as string_value
from idemlint.knowledge.vocabulary import DEFAULT as DEFAULT_VOCABULARY
from idemlint.knowledge.vocabulary import Vocabulary

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")

Scope = Union["cst.FunctionDef", "cst.Module", "cst.Lambda"]


class Binding:
    """`name = value` (or `for name in value`, `with value as name`) in one scope."""

    __slots__ = ("name", "value", "statement", "kind", "annotation")

    def __init__(
        self,
        name: str,
        value: cst.BaseExpression | None,
        statement: cst.CSTNode,
        kind: str,
        annotation: cst.BaseExpression | None = None,
    ) -> None:
        self.name = name
        self.value = value
        self.statement = statement
        self.annotation = annotation
        # "assign", "augassign", "for", "with", "walrus", "param", "import", "def", "unpack"
        self.kind = kind


class ModuleModel:
    def __init__(
        self, module: cst.Module, vocabulary: Vocabulary = DEFAULT_VOCABULARY, is_package: bool = False
    ) -> None:
        self.module = module
        self.is_package = is_package  # an `__init__.py`: its relative imports start from itself
        # the catalogue's words with the project's own (the configuration's extension points)
        self.vocabulary = vocabulary
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self.imports: dict[str, str] = {}
        # modules other project modules import under a name (the project index's; empty alone)
        self.module_aliases: Mapping[str, str] = {}
        self.module_defs: dict[str, cst.FunctionDef | cst.ClassDef] = {}
        self.functions: list[cst.FunctionDef] = []
        self.classes: list[cst.ClassDef] = []
        self.calls: list[cst.Call] = []
        self.loops: list[cst.For | cst.While] = []
        self.handlers: list[cst.ExceptHandler] = []
        self.bindings: dict[cst.CSTNode, dict[str, list[Binding]]] = defaultdict(lambda: defaultdict(list))
        self.subscript_assigns: list[tuple[cst.Subscript, cst.BaseExpression, cst.CSTNode]] = []
        self.attribute_assigns: list[tuple[cst.Attribute, cst.BaseExpression, cst.CSTNode]] = []
        self.returns: dict[cst.CSTNode, list[cst.Return]] = defaultdict(list)
        self.strings: list[cst.SimpleString | cst.FormattedString | cst.ConcatenatedString] = []
        # Facts an analysis derives from this file and keeps for later questions, under a name
        # of its own ("db.source_order", "db.races"): they live and die with the model, so many
        # models (a project-wide index) can be alive at once.
        self.memo: dict[str, Any] = {}
        # Every node's children (trivia skipped), recorded by the walk: libcst computes
        # `node.children` by visiting the node's fields, about as costly per node as parsing,
        # so the many small sub-walks the analyses make cost a dictionary lookup instead.
        self.children: dict[cst.CSTNode, tuple[cst.CSTNode, ...]] = {}
        # Every node's scope (see `scope_of`), recorded by the walk: asked for often, and
        # otherwise a climb through the node's ancestors each time.
        self.scopes: dict[cst.CSTNode, Scope] = {}
        _Walker(self).walk(module)

    # -- tree navigation -------------------------------------------------------------

    def children_of(self, node: cst.CSTNode) -> tuple[cst.CSTNode, ...]:
        """`children_of(node)`, looked up in this model's walk when `node` is in its tree."""
        found = self.children.get(node)
        return found if found is not None else syntax_children(node)

    def iter_nodes(self, root: cst.CSTNode, stop_at_functions: bool = True) -> Iterator[cst.CSTNode]:
        """`iter_nodes(root, ...)`, with children looked up in this model's walk."""
        return walk_nodes(root, stop_at_functions, self.children)

    def ancestors(self, node: cst.CSTNode, until: cst.CSTNode | None = None) -> Iterator[cst.CSTNode]:
        """The nodes around `node`, innermost first; with `until`, those inside it only."""
        parent = self.parents.get(node)
        while parent is not None and parent is not until:
            yield parent
            parent = self.parents.get(parent)

    def scope_of(self, node: cst.CSTNode) -> Scope:
        """The innermost function (or lambda, or the module) whose body holds `node`."""
        found = self.scopes.get(node)
        if found is not None:
            return found
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, (cst.FunctionDef, cst.Lambda)):
                return ancestor
        return self.module

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | None:
        """The innermost `def` around `node` (a lambda in between does not count)."""
        return next((a for a in self.ancestors(node) if isinstance(a, cst.FunctionDef)), None)

    def enclosing_class(self, node: cst.CSTNode) -> cst.ClassDef | None:
        for ancestor in self.ancestors(node):
            if isinstance(ancestor, cst.ClassDef):
                return ancestor
        return None

    def is_inside(self, node: cst.CSTNode, container: cst.CSTNode) -> bool:
        return node is container or any(a is container for a in self.ancestors(node))

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The simple or compound statement that holds `node`."""
        current = node
        for ancestor in self.ancestors(node):
            if isinstance(current, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
                return current
            current = ancestor
        return current

    def names_read(self, expr: cst.CSTNode) -> set[str]:
        """The names an expression reads, itself included when it is a bare name (`if done:`)."""
        return {x.value for x in (expr, *self.iter_nodes(expr)) if isinstance(x, cst.Name)}

    def sole_value(self, name: cst.Name) -> cst.BaseExpression | None:
        """The value of a name assigned exactly once (`x = ...`) in the scope that reads it."""
        bindings = self.bindings_of(self.scope_of(name), name.value)
        return bindings[0].value if len(bindings) == 1 and bindings[0].kind == "assign" else None

    # -- names ------------------------------------------------------------------------

    def dotted(self, expr: cst.BaseExpression) -> str | None:
        """`a.b.c` as written, or None when the expression is not a plain dotted name."""
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, cst.Attribute):
            base = self.dotted(expr.value)
            return None if base is None else f"{base}.{expr.attr.value}"
        return None

    def qualname(self, expr: cst.BaseExpression) -> str | None:
        """The dotted name with its first part resolved through the module's imports.

        `import uuid as u; u.uuid4` gives `uuid.uuid4`; a name defined in the module
        and not imported stays as written, so a local `def uuid4()` is not the stdlib one.
        """
        dotted = self.dotted(expr)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if self._shadowed(expr, head):
            return f"<local>.{dotted}"
        resolved = self.imports.get(head)
        if resolved is None:
            return dotted
        if rest and self.module_aliases:
            first, _, deeper = rest.partition(".")
            aliased = self.module_aliases.get(f"{resolved}.{first}")
            if aliased is not None:  # `compat.event_loop.sleep`, where compat imports trio as event_loop
                return f"{aliased}.{deeper}" if deeper else aliased
        return f"{resolved}.{rest}" if rest else resolved

    def _shadowed(self, expr: cst.BaseExpression, head: str) -> bool:
        """Whether `head` is a variable, parameter, function or class of this file rather
        than an import or a builtin (a local `uuid4` is not `uuid.uuid4`)."""
        scope = self.scope_of(expr)
        for candidate in (scope, self.module) if scope is not self.module else (scope,):
            if any(b.kind != "import" for b in self.bindings_of(candidate, head)):
                return True
        return False

    def call_name(self, call: cst.Call) -> str | None:
        return self.qualname(call.func)

    def bindings_of(self, scope: cst.CSTNode, name: str) -> list[Binding]:
        scoped = self.bindings.get(scope)
        return scoped.get(name, []) if scoped else []

    def bound_inside(self, node: cst.CSTNode) -> set[str]:
        """The names of `node`'s scope bound inside `node` (a loop), by any form of binding (`=`,
        `+=`, a tuple, `:=`, `for`, `with ... as`)."""
        bindings = self.bindings.get(self.scope_of(node), {})
        return {name for name, bound in bindings.items() if any(self.is_inside(b.statement, node) for b in bound)}

    def resolve(self, scope: cst.CSTNode, name: str) -> list[Binding]:
        """Where `name` is bound as seen from `scope`: its own bindings there, else the module's."""
        return self.bindings_of(scope, name) or self.bindings_of(self.module, name)


class _Walker:
    """Fills a ModuleModel in one pre-order pass over the tree."""

    def __init__(self, model: ModuleModel) -> None:
        self.model = model
        self.scopes: list[cst.CSTNode] = [model.module]
        self.late_imports: dict[str, str | None] = {}  # `import_module("...")` bindings (None: two modules)

    def walk(self, module: cst.Module) -> None:
        model = self.model
        parents = model.parents
        handlers = self.handlers()
        load_syntax_types()
        memo = model.children
        scope_of = model.scopes
        function_types = (cst.FunctionDef, cst.Lambda)
        # An explicit stack instead of recursion: deep trees must not hit the recursion limit.
        stack: list[tuple[cst.CSTNode, bool]] = [(module, False)]
        outside: dict[cst.CSTNode, cst.CSTNode] = {}  # a decorator -> the scope it is evaluated in
        while stack:
            node, leaving = stack.pop()
            if leaving:
                self.scopes.pop()
                continue
            # a decorator runs where its function is defined, not inside it (`@task(...)` on
            # `def f(task=None)` is the imported `task`)
            scope_of[node] = outside.get(node) or self.scopes[-1]  # type: ignore[assignment]
            handler = handlers.get(type(node))
            if handler is not None:
                handler(node)
            children = syntax_children(node)
            memo[node] = children
            if type(node) in function_types:
                if type(node) is cst.FunctionDef:
                    for decorator in node.decorators:
                        outside[decorator] = self.scopes[-1]
                self.scopes.append(node)
                stack.append((node, True))
            elif node in outside:
                for child in children:
                    outside[child] = outside[node]
            for child in reversed(children):
                parents[child] = node
                stack.append((child, False))

    def bind(
        self, target: cst.BaseExpression, value: cst.BaseExpression | None, statement: cst.CSTNode, kind: str
    ) -> None:
        scope = self.scopes[-1]
        if isinstance(target, cst.Name):
            self.model.bindings[scope][target.value].append(Binding(target.value, value, statement, kind))
        elif isinstance(target, (cst.Tuple, cst.List)):
            values = value.elements if isinstance(value, (cst.Tuple, cst.List)) else None
            pairwise = (
                values is not None
                and len(values) == len(target.elements)
                and not any(isinstance(e, cst.StarredElement) for e in (*target.elements, *values))
            )
            for index, element in enumerate(target.elements):
                # `a, b = x(), y()` binds each name to its own value; otherwise to the whole.
                self.bind(element.value, values[index].value if pairwise else value, statement, "unpack")  # type: ignore[index]
        elif isinstance(target, cst.StarredElement):
            self.bind(target.value, value, statement, "unpack")
        elif isinstance(target, cst.Subscript) and value is not None:
            self.model.subscript_assigns.append((target, value, statement))
        elif isinstance(target, cst.Attribute) and value is not None:
            self.model.attribute_assigns.append((target, value, statement))

    def handlers(self) -> dict[type, Callable[[Any], None]]:
        """Dispatch on the node's exact type: libcst's classes are final, and one dict
        lookup beats a chain of ABC isinstance checks on every node of the tree."""
        model = self.model
        return {
            cst.Call: model.calls.append,
            cst.SimpleString: model.strings.append,
            cst.FormattedString: model.strings.append,
            cst.ConcatenatedString: model.strings.append,
            cst.Assign: self._assign,
            cst.AnnAssign: self._ann_assign,
            cst.AugAssign: self._aug_assign,
            cst.NamedExpr: self._named_expr,
            cst.For: self._loop,
            cst.While: self._loop,
            cst.WithItem: self._with_item,
            cst.ExceptHandler: model.handlers.append,
            cst.Return: self._return,
            cst.FunctionDef: self._function,
            cst.ClassDef: self._class,
            cst.Import: lambda node: record_import(model, node),
            cst.ImportFrom: lambda node: record_import_from(model, node),
        }

    def _assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            self.bind(target.target, node.value, node, "assign")
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            record_late_import(self.model, self.late_imports, node.targets[0].target.value, node.value)

    def _ann_assign(self, node: cst.AnnAssign) -> None:
        if node.value is not None:
            self.bind(node.target, node.value, node, "assign")

    def _aug_assign(self, node: cst.AugAssign) -> None:
        self.bind(node.target, node.value, node, "augassign")

    def _named_expr(self, node: cst.NamedExpr) -> None:
        self.bind(node.target, node.value, node, "walrus")

    def _loop(self, node: cst.For | cst.While) -> None:
        self.model.loops.append(node)
        if isinstance(node, cst.For):
            self.bind(node.target, node.iter, node, "for")

    def _with_item(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self.bind(node.asname.name, node.item, node, "with")

    def _return(self, node: cst.Return) -> None:
        self.model.returns[self.scopes[-1]].append(node)

    def _function(self, node: cst.FunctionDef) -> None:
        model = self.model
        model.functions.append(node)
        model.bindings[self.scopes[-1]][node.name.value].append(Binding(node.name.value, None, node, "def"))
        if len(self.scopes) == 1:
            model.module_defs[node.name.value] = node
        params = node.params
        for param in (*params.posonly_params, *params.params, *params.kwonly_params):
            annotation = param.annotation.annotation if param.annotation is not None else None
            model.bindings[node][param.name.value].append(
                Binding(param.name.value, param.default, param, "param", annotation)
            )
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                model.bindings[node][star.name.value].append(Binding(star.name.value, None, star, "param"))

    def _class(self, node: cst.ClassDef) -> None:
        model = self.model
        model.classes.append(node)
        model.bindings[self.scopes[-1]][node.name.value].append(Binding(node.name.value, None, node, "def"))
        if len(self.scopes) == 1:
            model.module_defs[node.name.value] = node


def method_of(owner: cst.ClassDef, name: str) -> cst.FunctionDef | None:
    """The method a class body defines under `name` (not one of its bases')."""
    return next((s for s in owner.body.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


def class_attributes(owner: cst.ClassDef) -> set[str]:
    """The names a class body binds itself (`wait = 60`, `status: str = ...`, a model's fields)."""
    return {
        target.target.value
        for line in owner.body.body
        if isinstance(line, cst.SimpleStatementLine)
        for small in line.body
        for target in (
            small.targets if isinstance(small, cst.Assign) else [small] if isinstance(small, cst.AnnAssign) else []
        )
        if isinstance(target.target, cst.Name)
    }


def positional_parameters(model: ModuleModel, function: cst.FunctionDef) -> list[str]:
    """The names a call binds by position, without a method's `self`/`cls`."""
    names = [p.name.value for p in function.params.params]
    if names and names[0] in ("self", "cls") and model.enclosing_class(function) is not None:
        names = names[1:]
    return names


def called_name(call: cst.Call) -> str:
    """The name a call is made by, however its receiver is written: `get` of
    `X.objects.select_for_update().get(pk=1)`, `notify` of `notify(...)`; "" for `f()(x)`."""
    func = call.func
    return func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""


def local_callee(model: ModuleModel, call: cst.Call) -> cst.FunctionDef | None:
    """The function of this module that `call` runs: `helper()` for a module-level
    function, `self.helper()` / `cls.helper()` for a method of the enclosing class."""
    func = call.func
    if isinstance(func, cst.Name):
        if func.value in model.imports:
            return None
        target = model.module_defs.get(func.value)
        return target if isinstance(target, cst.FunctionDef) else None
    if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in ("self", "cls"):
        owner = model.enclosing_class(call)
        return method_of(owner, func.attr.value) if owner is not None else None
    return None
