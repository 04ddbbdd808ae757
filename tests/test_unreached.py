"""What `analysis/unreached.py` counts as named by nothing: read from source text alone."""

from __future__ import annotations

from idemlint.analysis.unreached import join_unreached, unreached_facts


def unreached(*files: tuple[str, str], tests: tuple[str, ...] = ()) -> set[str]:
    facts = [unreached_facts(source.encode(), module, True) for module, source in files]
    facts += [unreached_facts(source.encode(), "tests.test_it", False) for source in tests]
    return set(join_unreached(facts)[0])


def test_functions_classes_and_methods_nothing_names() -> None:
    source = """
def helper():
    pass

class Old:
    def run(self):
        pass

class Service:
    def used(self):
        pass

    def _unused(self):
        pass

    def unused(self):
        pass

    def __str__(self):
        return ""
"""
    caller = "from shop.a import Service\n\ndef view():\n    Service().used()\n"
    # a public method of a named class may be a hook or an API: only a private one counts
    assert unreached(("shop.a", source), ("shop.b", caller)) == {
        "shop.a.helper",
        "shop.a.Old",
        "shop.a.Old.run",
        "shop.a.Service._unused",
        "shop.b.view",
    }


def test_what_a_framework_or_a_registry_may_find_is_never_unreached() -> None:
    source = """
@shared_task
def nightly():
    pass

@router.post(
    "/charge",
    status_code=201,
)
async def charge():
    pass

@app.route("/pay")
def pay():
    pass

class Command(BaseCommand):
    def handle(self, *args, **options):
        pass

class Meta(Base, metaclass=Registry):
    def hook(self):
        pass

class Spread(
    Base,
):
    def hook(self):
        pass

class Alerting(Task):
    def on_failure(self):
        pass

@dataclass
class Record:
    def total(self):
        pass
"""
    assert unreached(("shop.a", source)) == set()


def test_a_plain_decorator_keeps_nothing() -> None:
    source = """
class Service:
    @staticmethod
    def build():
        pass

    @property
    def size(self):
        pass

@transaction.atomic
def settle():
    pass
"""
    assert unreached(("shop.a", source)) == {
        "shop.a.Service",
        "shop.a.Service.build",
        "shop.a.Service.size",
        "shop.a.settle",
    }


def test_a_base_of_the_same_name_in_another_module_may_be_a_librarys() -> None:
    todo = "class Task:\n    pass\n"
    alerts = "from celery import Task\n\nclass Alerting(Task):\n    def _on_failure(self):\n        pass\n"
    assert unreached(("shop.todo", todo), ("shop.alerts", alerts), ("shop.b", "Task\nAlerting\n")) == set()


def test_a_name_in_a_string_or_a_test_is_a_use_and_one_in_a_comment_is_not() -> None:
    source = "def payout():\n    pass\n\ndef settle():\n    pass\n\ndef refund():\n    pass\n"
    settings = 'SCHEDULE = {"payouts": "shop.a.payout"}\n# refund is kept for the admin\n'
    assert unreached(("shop.a", source), ("shop.settings", settings), tests=("settle()\n",)) == {"shop.a.refund"}


def test_a_subclass_of_a_plain_project_class_is_plain_and_one_of_a_framework_class_is_not() -> None:
    source = """
class Base:
    pass

class Child(Base):
    def step(self):
        pass

class View(APIView):
    pass

class Detail(View):
    def perform_update(self, serializer):
        pass
"""
    uses = "Base\nChild\nView\nDetail\n"
    assert unreached(("shop.a", source), ("shop.b", uses)) == set()
    assert unreached(("shop.a", source.replace("def step", "def _step")), ("shop.b", uses)) == {"shop.a.Child._step"}


def test_a_module_the_program_looks_names_up_in_has_no_unreached_definition() -> None:
    actions = "def pay_fee(request, foia):\n    pass\n\nclass Refund:\n    def run(self):\n        pass\n"
    other = "def orphan():\n    pass\n"
    view = (
        "from foia.views import detail_actions\n\n"
        "def post(request, foia):\n"
        '    action = getattr(detail_actions, request.POST.get("action", ""), None)\n'
        "    return action(request, foia)\n"
    )
    assert unreached(("foia.views.detail_actions", actions), ("foia.other", other), ("foia.views.detail", view)) == {
        "foia.other.orphan",
        "foia.views.detail.post",
    }
    # an alias, a relative import read from the file's own module, a list in parentheses with a
    # comment, a name built from a literal
    aliased = view.replace("import detail_actions", "import detail_actions as acts").replace("(detail_actions", "(acts")
    relative = view.replace("from foia.views import", "from . import")
    listed = view.replace("import detail_actions", "import (\n    detail_actions,  # the buttons\n    other,\n)")
    built = view.replace('request.POST.get("action", "")', 'f"{kind}_fee"')
    for source in (aliased, relative, listed, built):
        assert unreached(("foia.views.detail_actions", actions), ("foia.views.detail", source)) == {
            "foia.views.detail.post"
        }
    package = (unreached_facts(relative.encode(), "foia.views", True, is_package=True),)
    defined = unreached_facts(actions.encode(), "foia.views.detail_actions", True)
    assert join_unreached([*package, defined])[0] == {"foia.views.post"}  # `from . import` in `foia/views/__init__.py`
    # a name spelt in the source names that one only; a library module of the same short name, or
    # a local variable, is not the project's module
    spelt = view.replace('request.POST.get("action", "")', '"pay_fee"')
    library = view.replace("from foia.views import detail_actions", "from django.db import detail_actions")
    local = view.replace("from foia.views import detail_actions\n", "").replace("(detail_actions", "(foia")
    for source in (spelt, library, local):
        assert unreached(("foia.views.detail_actions", actions), ("foia.views.detail", source)) == {
            "foia.views.detail_actions.Refund",
            "foia.views.detail_actions.Refund.run",
            "foia.views.detail.post",
        } | ({"foia.views.detail_actions.pay_fee"} if source is not spelt else set())
