"""The architecture the code assumes: analyses below rules, every verdict worded by a rule."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "idemlint"
ABOVE_ANALYSIS = (
    "idemlint.rule",
    "idemlint.rules",
    "idemlint.engine",
    "idemlint.cli",
    "idemlint.runner",
    "idemlint.output",
    "idemlint.registry",
    "idemlint.fixes",
    "idemlint.server",
    "idemlint.api",
)


def module_of(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, type_checking: bool = True) -> set[str]:
    """Every module a file imports, relative imports made absolute, function-level ones too
    (they run when the function does); without `type_checking`, not those that only run
    under `if TYPE_CHECKING:`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped = set()
    if not type_checking:
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and ast.unparse(node.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
                skipped.update(id(inner) for statement in node.body for inner in ast.walk(statement))
    module = module_of(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*parent, *([node.module] if node.module else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return found


def test_analysis_imports_nothing_above_it() -> None:
    offenders = {
        (path.relative_to(PACKAGE).as_posix(), module)
        for path in (PACKAGE / "analysis").rglob("*.py")
        for module in imported_modules(path)
        if module in ABOVE_ANALYSIS or module.startswith(tuple(m + "." for m in ABOVE_ANALYSIS))
    }
    assert offenders == set()


def test_every_policy_verdict_has_a_message_in_its_rule() -> None:
    from idemlint.knowledge import retries
    from idemlint.rules.retry_policy import RetryNonRetryable, RetryWithoutJitter
    from idemlint.rules.unbounded_retry import UnboundedRetry

    worded = {key for rule in (RetryNonRetryable, RetryWithoutJitter, UnboundedRetry) for key in rule.messages}
    emitted = set()
    for path in (PACKAGE / "analysis" / "policy").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Verdict":
                kind, source = node.args[:2] if len(node.args) >= 2 else (None, None)
                if isinstance(source, ast.Name):  # a library's name from the knowledge package
                    source = ast.Constant(getattr(retries, source.id))
                if isinstance(kind, ast.Constant) and isinstance(source, ast.Constant):
                    emitted.add((kind.value, source.value))
    assert len(emitted) > 20, "too few verdicts found: the test reads the wrong files"
    assert emitted - worded == set()


def test_knowledge_imports_nothing_else_from_idemlint() -> None:
    """The vocabulary (issue 27) is the bottom layer: every analysis may read it, and it
    reads none of them, so teaching idemlint a word never drags an analysis along."""
    offenders = {
        (path.relative_to(PACKAGE).as_posix(), module)
        for path in (PACKAGE / "knowledge").rglob("*.py")
        for module in imported_modules(path)
        if module.startswith("idemlint") and not module.startswith("idemlint.knowledge")
    }
    assert offenders == set()
    assert list((PACKAGE / "knowledge").glob("*.py")), "no knowledge modules found: the test reads the wrong folder"


@pytest.mark.parametrize(
    ("words", "enough"),
    [
        (("POST", "PUT", "PATCH", "DELETE"), 2),
        (("STATUS", "STATE", "STAGE", "PHASE", "STEP"), 3),
        (("STRIPE", "BRAINTREE", "ADYEN", "TWILIO", "MOLLIE", "RAZORPAY", "SQUARE"), 2),
        (("REQUESTS", "HTTPX", "AIOHTTP", "URLLIB3"), 2),
    ],
    ids=["http methods", "state columns", "sdk packages", "http clients"],
)
def test_a_vocabulary_is_spelled_only_in_the_knowledge_package(words: tuple[str, ...], enough: int) -> None:
    """A tuple, set or list of these words written out anywhere else is a second definition."""
    spelled = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if "knowledge" not in path.parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.Tuple, ast.Set, ast.List))
        and sum(isinstance(e, ast.Constant) and str(e.value).upper() in words for e in node.elts) >= enough
    }
    assert spelled == set()


def test_an_attempt_counter_is_named_by_whole_words_in_one_place() -> None:
    """One definition for every analysis that asks (retry loops, recursive retries, delays):
    the words of a name, in snake_case or camelCase, not substrings."""
    from idemlint.knowledge.retries import is_attempt_counter

    counters = ["attempt", "retry_count", "tries_left", "numAttempts", "nretries", "MAX_RETRIES", "try_number"]
    counters += ["retrycount", "maxretries", "numretries", "MAXRETRIES"]
    others = ["i", "entry", "retrieved", "retriever", "attempted", "countries", "trying_hard"]
    assert [n for n in counters if not is_attempt_counter(n)] == []
    assert [n for n in others if is_attempt_counter(n)] == []
    for path in PACKAGE.rglob("*.py"):
        if "knowledge" not in path.parts:
            assert "attempt|" not in path.read_text(encoding="utf-8"), path  # a second spelling as a regex


def test_no_import_cycle_at_run_time() -> None:
    """Function-level imports included (they only postpone a cycle, to the first call), and
    relative ones; imports for type checking aside. A cycle makes a module's import order
    matter and hides which layer depends on which."""
    modules = {module_of(path): path for path in PACKAGE.rglob("*.py")}
    graph = {
        name: sorted(m for m in imported_modules(path, type_checking=False) if m in modules and m != name)
        for name, path in modules.items()
    }
    assert len(graph) > 50 and sum(map(len, graph.values())) > 100, "the graph reads the wrong files"
    cycles = []
    state: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(name: str, path: list[str]) -> None:
        state[name] = 1
        for other in graph[name]:
            if state.get(other) == 1:
                cycles.append(" -> ".join([*path[path.index(other) :], other]))
            elif other not in state:
                visit(other, [*path, other])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])
    assert cycles == []


def test_the_layers_below_the_rules_import_no_rule() -> None:
    """parsing, context and config sit below the rules: the composition root (context) builds
    analyses, the config module validates codes through the registry only when asked."""
    below = ("idemlint.parsing", "idemlint.context", "idemlint.analysis.project")
    offenders = {
        (name, module)
        for name in below
        for module in imported_modules(PACKAGE.parent / (name.replace(".", "/") + ".py"), type_checking=False)
        if module.startswith(("idemlint.rules", "idemlint.registry", "idemlint.engine", "idemlint.runner"))
    }
    assert offenders == set()


LIBRARIES = (
    "requests",
    "httpx",
    "aiohttp",
    "urllib3",
    "stripe",
    "braintree",
    "adyen",
    "twilio",
    "mollie",
    "razorpay",
    "boto3",
    "botocore",
    "google.cloud",
    "sqlalchemy",
    "django",
    "asyncpg",
    "psycopg2",
    "redis",
    "tenacity",
    "backoff",
    "stamina",
    "celery",
    "dramatiq",
    "huey",
    "rq",
    "gevent",
    "trio",
    "anyio",
    "eventlet",
    "niquests",
)
_NAMED = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(re.escape(n) for n in LIBRARIES) + r")(?![A-Za-z0-9_])", re.I)
# a rule's documentation may name a library: its texts, examples and the headings of its fixes
DOCUMENTATION = {"how_to_fix", "example_bad", "example_good", "explanation", "fix_safety", "fix_hint", "summary"}


def library_names_spelled(path: Path) -> set[tuple[int, str]]:
    """String and bytes literals that are a library's name or a name in it (`"stripe"`,
    `"requests.post"`, `b"httpx"`), or a regex or tag that holds one (`r"requests\\.|httpx\\."`,
    `"celery-call"`), docstrings and rule documentation aside."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            skipped.add(id(body[0].value))  # a docstring
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id in DOCUMENTATION for t in targets):
                skipped.update(id(inner) for inner in ast.walk(node))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and id(node) not in skipped:
            text = node.value.decode("latin-1") if isinstance(node.value, bytes) else node.value
            if any(text.lower() == name or text.lower().startswith(name + ".") for name in LIBRARIES):
                found.add((node.lineno, text))
            elif not any(c.isspace() for c in text) and _NAMED.search(text):  # a regex or a tag, not prose
                found.add((node.lineno, text))
    return found


def test_library_names_are_spelled_only_in_the_knowledge_package() -> None:
    """Teaching idemlint a library is an edit of `idemlint/knowledge/` alone: every analysis,
    pre-filter and rule reads the names from there."""
    spelled = {
        (path.relative_to(PACKAGE).as_posix(), line, text)
        for path in PACKAGE.rglob("*.py")
        if "knowledge" not in path.parts
        for line, text in library_names_spelled(path)
    }
    assert spelled == set()
    knowledge = {text for path in (PACKAGE / "knowledge").glob("*.py") for _line, text in library_names_spelled(path)}
    assert {"stripe", "requests.Session", "tenacity.retry", "django.shortcuts.get_object_or_404"} <= knowledge


def test_every_module_is_short_enough_to_read() -> None:
    """One job per module: past 450 lines a module has become two (issue 27's bar)."""
    long = {
        path.relative_to(PACKAGE).as_posix(): n
        for path in PACKAGE.rglob("*.py")
        if (n := len(path.read_text(encoding="utf-8").splitlines())) > 450
    }
    assert long == {}


def names_bound_twice(path: Path) -> set[str]:
    """The names a module's own top level binds more than once (by assignment, `def` or `class`):
    a second binding silently replaces the first, so a word edited in one place is not the word used."""
    seen: set[str] = set()
    twice: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign):
            names = [target.id for target in node.targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            names = [node.target.id]
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names = [node.name]
        else:
            continue
        twice.update(name for name in names if name in seen)
        seen.update(names)
    return twice


def test_every_word_is_defined_once() -> None:
    """Each word the linter knows has one definition: no module binds a top-level name twice."""
    bound_twice = {
        (path.relative_to(PACKAGE).as_posix(), name)
        for path in PACKAGE.rglob("*.py")
        for name in names_bound_twice(path)
    }
    assert bound_twice == set()
