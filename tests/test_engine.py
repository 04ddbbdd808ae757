"""Bad input never aborts a run: it becomes IDM900, and a crashing rule is isolated."""

from __future__ import annotations

from collections.abc import Iterator

from idemlint.config import Config
from idemlint.engine import check_source
from idemlint.rule import Report, Rule
from idemlint.rules import ALL_RULES

from conftest import found, lint

BUGGY = """\
import uuid, requests
from tenacity import retry, retry_if_exception_type as on, stop_after_attempt, wait_random_exponential

@retry(retry=on(ConnectionError), stop=stop_after_attempt(3), wait=wait_random_exponential())
def charge(order):
    return requests.post("https://pay.example", headers={"Idempotency-Key": str(uuid.uuid4())})
"""


def test_syntax_error_is_one_parse_error_finding_with_the_parsers_line() -> None:
    result = lint("from tenacity import retry\nidempotency_key = uuid.uuid4(\n")
    assert [(f.line, f.code) for f in result.findings] == [(2, "IDM900")]
    assert "syntax error" in result.findings[0].message


def test_undecodable_bytes_are_a_parse_error() -> None:
    result = check_source(b"x = '\xff\xfe'\n", "latin.py", Config(), ALL_RULES)
    assert [(f.line, f.code) for f in result.findings] == [(1, "IDM900")]
    assert "decode" in result.findings[0].message


def test_coding_cookie_is_honoured() -> None:
    source = "# -*- coding: latin-1 -*-\n# caf\xe9\n".encode("latin-1") + BUGGY.encode()
    result = check_source(source, "cookie.py", Config(), ALL_RULES)
    assert [(f.line, f.code) for f in result.findings] == [(8, "IDM001")]


def test_bom_and_crlf_keep_line_numbers() -> None:
    source = b"\xef\xbb\xbf" + BUGGY.replace("\n", "\r\n").encode()
    result = check_source(source, "crlf.py", Config(), ALL_RULES)
    assert [(f.line, f.code) for f in result.findings] == [(6, "IDM001")]


def test_deep_nesting_is_reported_not_crashed() -> None:
    source = (
        "import uuid\nfrom tenacity import retry\nidempotency_key = " + "(" * 300 + "uuid.uuid4()" + ")" * 300 + "\n"
    )
    result = lint(source)
    assert [f.code for f in result.findings] == ["IDM900"]
    assert "nested" in result.findings[0].message


def test_a_crashing_rule_is_reported_and_other_rules_still_report() -> None:
    class Exploding(Rule):
        code = "IDM999"
        name = "exploding-rule"
        triggers = ()

        def check(self, ctx: object) -> Iterator[Report]:
            raise ValueError("boom")
            yield  # pragma: no cover

    result = check_source(BUGGY, "svc.py", Config(), (*ALL_RULES, Exploding))
    assert [(f.line, f.code) for f in result.findings] == [(6, "IDM001")]
    assert len(result.errors) == 1 and "IDM999" in result.errors[0] and "ValueError: boom" in result.errors[0]


def test_noqa_suppresses_the_code_on_its_line() -> None:
    source = BUGGY.replace("str(uuid.uuid4())})", "str(uuid.uuid4())})  # noqa: IDM001")
    assert found(source) == set()
    bare = BUGGY.replace("str(uuid.uuid4())})", "str(uuid.uuid4())})  # noqa")
    assert found(bare) == set()
    other = BUGGY.replace("str(uuid.uuid4())})", "str(uuid.uuid4())})  # noqa: E501")
    assert found(other) == {(6, "IDM001")}


def test_unused_noqa_is_reported_when_asked() -> None:
    source = "import requests\nrequests.get('https://x')  # noqa: IDM001\n"
    assert found(source, unused_noqa=True) == {(2, "IDM800")}
    assert found(source) == set()


def test_a_suppression_in_a_replaced_definition_is_not_unused() -> None:
    """A definition a later one of the same name replaces is not reported; a `noqa` in it
    still silences something, so it is not reported as unused either."""
    copy = "import tenacity, requests\n\n\n@tenacity.retry  # noqa: IDM201, IDM202, IDM203\ndef get(url):\n    return requests.get(url)\n"
    replaced = copy + "\n\ndef get(url):  # noqa: F811\n    return None\n"
    assert found(replaced, unused_noqa=True) == set()
    assert found(copy.replace("  # noqa: IDM201, IDM202, IDM203", "")) == {(4, "IDM201"), (4, "IDM202"), (4, "IDM203")}


def test_per_file_ignores_switch_rules_off_by_glob() -> None:
    config = Config(per_file_ignores=(("legacy/*", ("IDM0",)),))
    assert found(BUGGY, path="legacy/pay.py", config=config) == set()
    assert found(BUGGY, path="app/pay.py", config=config) == {(6, "IDM001")}


def test_local_function_named_uuid4_is_not_the_stdlib_one() -> None:
    source = BUGGY.replace(
        "import uuid, requests", "import requests\nclass uuid:\n    @staticmethod\n    def uuid4(): return 'fixed'"
    )
    assert found(source) == set()


def test_file_without_trigger_words_is_not_parsed() -> None:
    # The pre-filter rejects the file before libcst sees its syntax error: no rule could
    # fire in it, so nothing was lost by not parsing it.
    assert found("def broken(:\n") == set()
    # nor because of its comments: another tool's codes need no parse, and an unused
    # `# noqa: IDM...` is found without one
    assert found("def broken(:  # noqa: F401\n", unused_noqa=True) == set()
    assert found("def broken(:\nx = 1  # noqa: IDM001\n", unused_noqa=True) == {(2, "IDM800")}


def test_pre_filter_words_for_updates_and_project_functions() -> None:
    from idemlint.analysis.project_index import ProjectIndex
    from idemlint.rules import IgnoredUpdateCount, KeyRegeneratedPerAttempt

    config = Config()
    counts = IgnoredUpdateCount
    assert not counts.wanted("row.updated_at = now()\ncursor.execute(sql)\n", config)
    for write in ("qs.update(paid=true)", "cursor.execute('update orders\n set')", "sql = 'update\norders'"):
        assert counts.wanted(f"{write}\ncursor.execute(sql)\n", config), write
    # a project function that sends a key satisfies IDM001's key-making words where it is
    # called, not where a method of the same name is only defined
    keys = KeyRegeneratedPerAttempt
    project = ProjectIndex(names_with={"sends_key": frozenset({"perform_mutation("})})
    defined = "class M:\n    def perform_mutation(self, request_id):\n        for x in y: pass\n"
    assert not keys.wanted(defined, config, project)
    assert keys.wanted(defined + "    def run(self):\n        self.perform_mutation(1)\n", config, project)


def test_test_files_and_migrations_are_skipped_by_default() -> None:
    assert found(BUGGY, path="tests/test_pay.py") == set()
    assert found(BUGGY, path="app/conftest.py") == set()
    assert found(BUGGY, path="nodeodm/tests.py") == set()  # Django's test module
    assert found(BUGGY, path="shop/contest.py") == {(6, "IDM001")}
    assert found(BUGGY, path="ab_tests/views.py") == {(6, "IDM001")}  # an A/B test feature, not a test folder
    assert found(BUGGY, path="exams/test.py") == {(6, "IDM001")}  # an exam's test, not Django's tests.py
    assert found(BUGGY, path="tests/test_pay.py", config=Config(check_tests=True)) == {(6, "IDM001")}
    migration = "def forwards(apps, schema_editor):\n    Order = apps.get_model('shop', 'Order')\n    Order.objects.filter(pk=1).update(status='paid')\n"
    assert found(migration, path="shop/migrations/0002_backfill.py") == set()
    assert found(migration, path="app/database/revisions/tenant/versions/2023-01-30_e4b4.py") == set()  # alembic
    assert found(migration, path="shop/migrations/0002_backfill.py", config=Config(check_migrations=True)) == {
        (3, "IDM103")
    }


FACTORY = """\
import factory

from shop.models import Order


class OrderFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Order

    @factory.post_generation
    def settle(self, create, extracted, **kwargs):
        order = Order.objects.get(pk=self.pk)
        if order.status != "paid":
            order.status = "paid"
            order.save()
            notify(order)
"""


def test_test_support_by_what_it_defines_is_skipped_like_tests() -> None:
    """factory_boy's model factories build rows for tests wherever the module sits; a project
    module that happens to be named `factory` (Flask's app factory) is product code."""
    assert found(FACTORY, path="shop/factories.py") == set()
    assert found(FACTORY, path="shop/factories.py", config=Config(check_tests=True)) == {(14, "IDM101")}
    flask_factory = FACTORY.replace("(factory.django.DjangoModelFactory)", "").replace(
        "@factory.post_generation\n    ", ""
    )
    assert found(flask_factory, path="shop/app_factory.py") == {(13, "IDM101")}
    assert found(FACTORY.replace("import factory", "import pytest, factory"), path="shop/fixtures.py") == set()
    # a project's own `factory.py` classes, and a `test` command that imports pytest to run the suite
    own = FACTORY.replace("factory.django.DjangoModelFactory", "factory.ClientFactory")
    assert found(own, path="shop/billing.py") == {(14, "IDM101")}
    runs_suite = flask_factory + "\n\ndef test():\n    import pytest\n\n    return pytest.main(['tests'])\n"
    assert found(runs_suite, path="shop/cli.py") == {(13, "IDM101")}


def test_pre_filter_never_hides_a_fixture_finding(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from conftest import FIXTURES

    sources = {p: p.read_text(encoding="utf-8") for p in sorted(FIXTURES.rglob("*.py"))}
    filtered = {p: found(s, path=p.name) for p, s in sources.items()}
    monkeypatch.setattr(Rule, "wanted", classmethod(lambda cls, lowered, config, project=None: True))
    unfiltered = {p: found(s, path=p.name) for p, s in sources.items()}
    assert filtered == unfiltered
    assert sum(len(v) for v in filtered.values()) > 300


def test_a_file_over_the_time_budget_is_reported_not_waited_for(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import time

    import idemlint.engine as engine

    class Slow(Rule):
        code = "IDM998"
        name = "slow-rule"
        triggers = ()

        def check(self, ctx: object) -> Iterator[Report]:
            time.sleep(5)
            yield from ()

    monkeypatch.setattr(engine, "FILE_TIME_BUDGET", 0.3)
    started = time.perf_counter()
    result = check_source(BUGGY, "slow.py", Config(), (*ALL_RULES, Slow))
    assert time.perf_counter() - started < 2
    assert [(f.line, f.code) for f in result.findings] == [(1, "IDM900")]
    assert "took longer than 0.3 s" in result.findings[0].message


_SPAN_EDGES = (
    "",
    "\n\n",
    "x = 1",  # no trailing newline: libcst generates one and drops it
    "x = 1\r\ny = (\r\n    2,\r\n)\r\n",
    "def f():\n\tif a:\n\t\treturn 'é' ; b = 2  # tabs, a non-ASCII string, two statements\n",
    "@a\n@b(c)\nclass A(B, metaclass=M):\n    x: int = 1\n    # a trailing comment\n",
    "s = '''one\r\ntwo'''\nt = f'{s!r:>10}' + \\\n    'joined'\n",
    "async def g():\n    async with a as b, c:\n        yield [x async for x in b if x]\n",
)


def test_node_spans_are_libcsts_positions_on_every_fixture() -> None:
    """idemlint.source_spans counts characters through libcst's code generation instead of
    using its PositionProvider (three times slower): every node of every fixture, and each
    edge case of newlines and layout, must get the provider's span exactly."""
    from pathlib import Path

    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from idemlint.source_spans import SourceSpans

    fixtures = sorted((Path(__file__).parent / "fixtures").rglob("*.py"))
    sources = [*_SPAN_EDGES, *(path.read_text(encoding="utf-8") for path in fixtures)]
    assert len(sources) > 50
    for source in sources:
        module = cst.parse_module(source)
        ranges = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        expected = {n: (r.start.line, r.start.column + 1, r.end.line, r.end.column + 1) for n, r in ranges.items()}
        spans = SourceSpans(module)
        assert dict(spans) == expected, source[:60]
