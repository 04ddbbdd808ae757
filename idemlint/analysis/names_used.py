"""The names a file uses: every identifier outside its prose and comments (a regular
expression, for files not parsed), or, in a parsed file, those used other than in the calls
already counted. A function whose name a file uses this way may be called from anywhere
(handed on as a value, spelt in a string, queued), so what its known callers hold says nothing
of it. A use that can only name a module's function (a bare name outside a class body,
`views.approve` of an imported module) is marked `FUNCTION_ONLY`: it says nothing of a method
of that name (`Review.approve`), which only an attribute, a string or the body of a class
defining it reaches."""

from __future__ import annotations

import ast
import re
from collections import Counter

from idemlint.analysis.chosen_rows import called_name

# every identifier a file names (a call, `accept.delay(`, `callback=req.accept`, `return
# req.accept`, `getattr(req, "accept")`), but the one a `def` defines
IDENTIFIER = re.compile(rb"[A-Za-z_]\w*")
# what names nothing: a comment, a docstring, a string of prose (`"You cannot confirm this
# change"`). Every string and comment is matched from its opening quote or `#`, escapes and
# all, so the scan keeps in step with the code; a comment, a triple-quoted string, a string of
# more than names (a path, a pattern) and a sentence (three words or more) are dropped. A string of names
# (`"reject save".split()`, `"app.tasks.reject"`) and a template or f-string (`{`, `}`) are
# kept: they may name a method
_STRING = re.compile(
    rb'"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""'
    rb"|'''(?:[^'\\]|\\[\s\S]|'(?!''))*'''"
    rb'|"(?:[^"\\\n]|\\[\s\S])*"'
    rb"|'(?:[^'\\\n]|\\[\s\S])*'"
    rb"|\#[^\n]*"
)
_NAMES = re.compile(rb"^[\w.: ,-]*$")  # names, dotted (`app.tasks.reject`), or a list of them
_SENTENCE = re.compile(rb"^[A-Za-z][^(){}\[\]=+*/%<>&|@#\\]*$")


_DEFINED = re.compile(rb"\bdef[ \t]+(\w+)")


def defined_names(source: bytes) -> tuple[str, ...]:
    """The names a file's `def`s define, repeats kept, read by a regular expression."""
    return tuple(name.decode() for name in _DEFINED.findall(source))


def names_used(source: bytes, defined: tuple[str, ...]) -> frozenset[str]:
    """Every identifier a file names outside its prose, but those its `def`s only define; a
    function of a module it imports (`views.approve`) as `FUNCTION_ONLY` + its name."""
    code = _without_prose(source)
    modules = {m for found in _IMPORT.findall(code) for m in _bound_modules(found)}
    functions: set[str] = set()
    if modules:
        of_module = re.compile(rb"(?<![\w.])(?:%s)((?:\.[a-z_][a-z0-9_]*)*)\.(\w+)" % b"|".join(sorted(modules)))

        def module_function(match: re.Match[bytes]) -> bytes:  # `tasks.expire.delay`: `expire` and `delay`
            functions.update(part.decode() for part in (*match.group(1).split(b".")[1:], match.group(2)))
            return b" "

        code = of_module.sub(module_function, code)
    tokens = Counter(IDENTIFIER.findall(code))
    for name in defined:
        tokens[name.encode()] -= 1  # a `def` names what it defines, it does not use it
    used = {n.decode() for n, count in tokens.items() if count > 0}
    return frozenset(used | {FUNCTION_ONLY + name for name in functions})


# an import of a module and what it binds (`import reviews.views`, `import reviews.views as rv`,
# `from . import views`); not `from package import name`, whose name may be an object
_IMPORT = re.compile(rb"^[ \t]*(?:from[ \t]+\.+[ \t]+)?import[ \t]+(\([^)]*\)|[^\n]*)", re.MULTILINE)
_BOUND = re.compile(rb"([\w.]+)(?:[ \t]+as[ \t]+(\w+))?")


def _bound_modules(names: bytes) -> set[bytes]:
    bound = set()
    for part in names.strip(b"()").split(b","):
        match = _BOUND.search(part)
        if match:
            name = match.group(2) or match.group(1).split(b".")[0]
            if name[:1].islower():
                bound.add(name)
    return bound


FUNCTION_ONLY = "function "  # before a name used where only a module's function can be meant


def any_use(names: frozenset[str] | set[str]) -> set[str]:
    """The names used, whatever they may name."""
    return {name.removeprefix(FUNCTION_ONLY) for name in names}


_DOTTED = re.compile(r"^[A-Za-z_]\w*(?:[.:][A-Za-z_]\w*)*$")


def names_used_otherwise(tree: ast.Module, counted: set[int]) -> set[str]:
    """The names a parsed file uses but in the calls already `counted` (by the id of the node
    naming the function): module-level calls, every name used as a value, and strings
    (`getattr(r, "accept")`, `"app.tasks.accept"`; not a key tested in a mapping, `"accept" in
    request.POST`, nor a route's `name=`). A use that can only name a module's function is
    marked `FUNCTION_ONLY`."""
    modules: set[str] = set()
    in_class_bodies: set[int] = set()  # a name a class body uses and defines: its own method or attribute
    not_names: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) or isinstance(node, ast.ImportFrom) and not node.module and node.level:
            modules.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ClassDef):
            defined = _defined_in(node)
            in_class_bodies.update(id(n) for n in _class_level(node) if isinstance(n, ast.Name) and n.id in defined)
        not_names.update(id(n) for n in _strings_naming_nothing(node))
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in counted:
            continue
        if isinstance(node, ast.Attribute):
            found.add(FUNCTION_ONLY + node.attr if _is_module(node.value, modules) else node.attr)
        elif isinstance(node, ast.Name):
            found.add(node.id if id(node) in in_class_bodies else FUNCTION_ONLY + node.id)
        elif isinstance(node, ast.alias) and node.asname and node.asname != node.name:
            found.add(FUNCTION_ONLY + node.name.rsplit(".", 1)[-1])  # `from app.tasks import reject as refuse`
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in not_names:
            if _DOTTED.match(node.value):
                found.update(node.value.replace(":", ".").split("."))  # `"reject"`, `"app.tasks.reject"`
    return found


def _is_module(value: ast.expr, modules: set[str]) -> bool:
    """`views` or `reviews.views` where the file imports that module (`import reviews.views`,
    `from . import views`): not a name a `from package import name` binds, which may be an
    object (`from flask_login import current_user`)."""
    while isinstance(value, ast.Attribute) and value.attr[:1].islower():
        value = value.value
    return isinstance(value, ast.Name) and value.id in modules


def _class_level(cls: ast.ClassDef) -> list[ast.AST]:
    """The nodes a class body runs as it is defined, where a bare name may be a method's
    (`actions = [approve]` below `def approve`, `@status.setter`), not those of its functions'
    bodies. A name the class does not bind is the module's (an imported admin action)."""
    found: list[ast.AST] = []
    todo: list[ast.AST] = list(cls.body)
    while todo:
        node = todo.pop()
        found.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            todo.extend((*node.decorator_list, *node.args.defaults))
            todo.extend(d for d in node.args.kw_defaults if d is not None)  # `*, a, b=1`: None for `a`
        elif not isinstance(node, (ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return found


def _defined_in(cls: ast.ClassDef) -> set[str]:
    """The names a class body binds: its methods, its attributes."""
    found: set[str] = set()
    for statement in cls.body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            found.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return found


def _strings_naming_nothing(node: ast.AST) -> list[ast.AST]:
    """A key tested in a mapping (`"approve" in request.POST`) and a route's `name="approve"`
    (`path(...)`, `url(...)`, `router.register(...)`): strings no call is made by."""
    if isinstance(node, ast.Compare) and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        if not isinstance(node.comparators[0], (ast.Tuple, ast.List, ast.Set, ast.Constant)):
            return [node.left]
    if isinstance(node, ast.Call) and called_name(node) in _NAMING_CALLS:
        return [k.value for k in node.keywords if k.arg == "name"]
    return []


# calls whose `name=` names a route or a setting, not a function (`send_task(name=...)` does)
_NAMING_CALLS = frozenset({"path", "re_path", "url", "register", "route", "add_url_rule"})


def _without_prose(source: bytes) -> bytes:
    def keep(match: re.Match[bytes]) -> bytes:
        text = match.group()
        if text[:1] == b"#":
            return b" "
        if b"{" in text or b"}" in text:
            return text
        if text[:3] in (b'"""', b"'''"):
            return b" "
        body = text[1:-1]
        if not _NAMES.match(body):
            return b" "  # a path, a pattern, a message: no name a call is made by
        return b" " if len(body.split()) >= 3 and _SENTENCE.match(body) else text

    return _STRING.sub(keep, _ROUTE_NAME.sub(lambda m: m.group(1), source))


# a route's name in a URL table (`path("...", views.approve, name="approve")`): no function is
# called by it. Only in `path()`, `re_path()` and `url()` (parentheses one deep inside): a `name=`
# elsewhere may be what a helper calls (`run_action(order, name="approve")`)
_ROUTE_NAME = re.compile(rb"(\b(?:path|re_path|url)\((?:[^()]|\([^()]*\))*?\bname\s*=\s*)(?:\"\w*\"|'\w*')")
