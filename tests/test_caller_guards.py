"""Which functions the project calls only under a lock or for records a state filter chose."""

from __future__ import annotations

import ast

from idemlint.analysis.caller_guards import call_facts, join_call_facts
from idemlint.analysis.final_states import parse_state_tests


def decided(*sources: str, locked: bool = False, qualified: bool = False) -> frozenset[str]:
    """The functions decided by their callers: by name (`close`), or with `qualified` by class
    too (`Review.close`: decided where the calls made on a record of that class are)."""
    files = []
    for source in sources:
        raw = source.encode()
        files.append(call_facts(raw, parse_state_tests(raw)))
    found = join_call_facts(files, locked=locked)
    return found if qualified else frozenset(name for name in found if "." not in name)


DEFINED = "class Req:\n    def accept(self): ...\n    def close(self): ...\n"


def test_an_unlocked_test_of_the_record_is_not_enough() -> None:
    caller = "def view(req):\n    if req.state != 1:\n        raise ValueError\n    req.accept()\n"
    assert decided(DEFINED, caller, qualified=True) == frozenset()


def test_a_lock_taken_in_a_branch_holds_only_there() -> None:
    caller = (
        "def view(pk, fast):\n    if fast:\n        req = Req.objects.select_for_update().get(pk=pk)\n"
        "    req.state\n    req.close()\n"
    )
    assert decided(DEFINED, caller, qualified=True) == frozenset()


def test_a_shared_lock_decides_what_runs_inside_it() -> None:
    caller = "def view(req):\n    with cache.lock(req.pk):\n        req.close()\n    req.accept()\n"
    assert decided(DEFINED, caller) == {"close"}


def test_rows_a_state_filter_chose_are_decided() -> None:
    caller = "def sweep():\n    for req in Req.objects.filter(state__in=[1]):\n        req.close()\n"
    assert decided(DEFINED, caller) == {"close"}


def test_calls_under_a_row_lock_are_decided() -> None:
    caller = "def view(pk):\n    req = Req.objects.select_for_update().get(pk=pk)\n    req.state\n    req.close()\n"
    assert decided(DEFINED, caller) == {"close"}


def test_one_unguarded_use_anywhere_undoes_it() -> None:
    guarded = "def view(req):\n    with cache.lock(req.pk):\n        req.accept()\n"
    for other in (
        "def api(req):\n    req.accept()\n",  # called with no test
        "HANDLERS = {'accept': Req.accept}\n",  # handed on as a value
        "def later(req):\n    accept.delay(req.pk)\n",  # queued as a task
    ):
        assert decided(DEFINED, guarded, other, qualified=True) == frozenset(), other


def test_a_name_defined_twice_is_not_judged() -> None:
    # one of them may be a framework's entry point (a view's action, a signal receiver) that
    # calls the other: nothing in the project calls it, under a lock or not
    guarded = "def view(req):\n    with cache.lock(req.pk):\n        req.accept()\n"
    action = "class InviteViewSet:\n    def accept(self, request, pk):\n        self.get_object().accept()\n"
    assert decided(DEFINED, action, guarded, qualified=True) == frozenset()


def test_a_recursive_call_runs_in_a_decided_run() -> None:
    tree = "class Node:\n    def close(self):\n        for child in self.children:\n            child.close()\n"
    guarded = "def view(pk):\n    with cache.lock(pk):\n        Node.objects.get(pk=pk).close()\n"
    assert decided(tree, guarded) == {"close"}
    assert decided(tree, qualified=True) == frozenset()  # no call of it is ever locked


def test_a_named_lock_holds_a_record_read_inside_it() -> None:
    fresh = "def view(pk):\n    with cache.lock(pk):\n        req = Req.objects.get(pk=pk)\n        req.close()\n"
    assert decided(DEFINED, fresh, locked=True) == {"close"}
    stale = "def view(pk):\n    req = Req.objects.get(pk=pk)\n    with cache.lock(pk):\n        req.close()\n"
    assert decided(DEFINED, stale) == {"close"}  # the callers' precondition (IDM103)
    assert decided(DEFINED, stale, locked=True, qualified=True) == frozenset()  # its test may be stale (IDM101)


def test_the_parents_method_called_from_an_override_is_no_locked_call() -> None:
    # the framework calls form_valid with no lock; a lock inside one override decides nothing
    view = (
        "class Edit(UpdateView):\n    def form_valid(self, form):\n        with cache.lock('edit'):\n"
        "            return super().form_valid(form)\n"
    )
    base = "class UpdateView:\n    def form_valid(self, form): ...\n"
    assert decided(base, view, qualified=True) == frozenset()
    assert decided(base, view, locked=True, qualified=True) == frozenset()


def test_records_are_matched_as_written() -> None:
    source = b"def f(self):\n    for paper in self.papers.filter(state=1):\n        paper.accept()\n"
    guarded, chosen, *_rest = call_facts(source, ast.parse(source))
    assert guarded == chosen == {"accept"}


MANAGER = (
    "class Requests(Manager):\n"
    "    def pending(self, b):\n        return self.get(barrier=b, state=1)\n"
    "    def newest(self, b):\n        return self.filter(barrier=b).last()\n"
    "    def either(self, b):\n        if b:\n            return self.pending(b)\n        return None\n"
    "    def answered(self, b):\n        return Response(data=b, status=200)\n"
)


def test_a_record_a_function_chose_by_state_is_decided() -> None:
    for caller in (
        "def view(b):\n    req = Req.objects.pending(b)\n    req.accept()\n",  # a manager's method
        "def view(b):\n    req = Req.objects.either(b)\n    if req:\n        req.accept()\n",  # through another
        "def view(pk):\n    req = Req.objects.get(pk=pk, state__in=[1, 2])\n    req.accept()\n",  # its own query
        "def view(pk):\n    req = get_object_or_404(Req, pk=pk, state=1)\n    req.accept()\n",  # Django's shortcut
        # the returned record called at once (in a file parsed for its state test)
        "def view(b):\n    if b.state == 1:\n        Req.objects.pending(b).accept()\n",
    ):
        assert decided(DEFINED, MANAGER, caller) == {"accept"}, caller


def test_a_record_chosen_otherwise_or_bound_again_is_not() -> None:
    for caller in (
        "def view(b):\n    req = Req.objects.newest(b)\n    req.accept()\n",  # chosen by no state
        "def view(b):\n    req = Req.objects.answered(b)\n    req.accept()\n",  # a state handed to a call
        "def view(pk):\n    req = render(Req.objects.filter(state=1))\n    req.accept()\n",
        "def view(pk):\n    req = get_object_or_404(Req, pk=pk)\n    req.accept()\n",
        "def view(b, other):\n    req = Req.objects.pending(b)\n    if other:\n        req = other\n    req.accept()\n",
        "def view(b):\n    req = Req.objects.pending(b)\n    req = Req.objects.get(pk=b)\n    req.accept()\n",
        # bound again by unpacking, `except ... as`, a `match` capture, a loop's next round, a move
        "def view(b, other):\n    req = Req.objects.pending(b)\n    req, n = other, 1\n    req.accept()\n",
        "def view(b):\n    req = Req.objects.pending(b)\n    try:\n        go()\n"
        "    except Exception as req:\n        req.accept()\n",
        "def view(b, cmd):\n    req = Req.objects.pending(b)\n    match cmd:\n        case {'r': req}:\n"
        "            req.accept()\n",
        "def view(b, rows):\n    req = Req.objects.pending(b)\n    for row in rows:\n        req.accept()\n"
        "        req = row\n",
        "def view(b):\n    req = Req.objects.pending(b)\n    req.state = 3\n    req.accept()\n",
    ):
        assert decided(DEFINED, MANAGER, caller, qualified=True) == frozenset(), caller
    twice = "class Other(Manager):\n    def pending(self, b):\n        return self.get(pk=b)\n"
    inline = "def view(b):\n    if b.state == 1:\n        Req.objects.pending(b).accept()\n"
    assert decided(DEFINED, MANAGER, twice, inline, qualified=True) == frozenset()
    caller = "def view(b):\n    req = Req.objects.pending(b)\n    req.accept()\n"
    assert (
        decided(DEFINED, MANAGER, twice, caller, qualified=True) == frozenset()
    )  # which `pending` returned it is unknown
    assert (
        decided(DEFINED, MANAGER, caller, locked=True, qualified=True) == frozenset()
    )  # chosen, but read with no lock


def test_what_runs_later_or_under_a_local_lock_is_not_decided() -> None:
    for caller in (
        # on commit: the row lock is gone by then
        "def view(pk):\n    req = Req.objects.select_for_update().get(pk=pk)\n"
        "    transaction.on_commit(lambda: req.close())\n",
        # a bare name may hold a threading.Lock(), which other processes do not honour
        "_lock = threading.Lock()\n\ndef view(req):\n    with _lock:\n        req.close()\n",
    ):
        assert decided(DEFINED, caller, qualified=True) == frozenset(), caller


def test_only_filters_that_name_the_states_choose_rows() -> None:
    for iterable in ("filter(owner=o, state__isnull=False)", "exclude(state=1)", "filter(Req.state != 1)"):
        caller = f"def sweep(o):\n    for req in Req.objects.{iterable}:\n        req.close()\n    req.state == 1\n"
        assert decided(DEFINED, caller, qualified=True) == frozenset(), iterable


def test_every_spelling_of_the_name_elsewhere_counts_as_a_use() -> None:
    locked = "def view(req):\n    with cache.lock(req.pk):\n        req.close()\n"
    for other in (
        "def later(req):\n    getattr(req, 'close')()\n",  # by its name in a string
        "def later(req):\n    return req.close\n",  # handed back as a value
        "def later(req):\n    action = req.close  # bound here\n",
        "def later(req):\n    if req.state == 1:\n        run(getattr(req, 'close'))\n",  # the same in a parsed file
    ):
        assert decided(DEFINED, locked, other, qualified=True) == frozenset(), other


def test_a_call_inside_a_decided_function_is_decided() -> None:
    model = (
        "class Ticket:\n    def change(self, pk):\n        locked = Ticket.objects.select_for_update().get(pk=pk)\n"
        "        self.finish()\n    def finish(self):\n        self.activate()\n    def activate(self): ...\n"
        "    def reopen(self): ...\n"
    )
    assert decided(model) == {"finish", "activate"}
    plain = "def api(t):\n    t.state == 1\n    t.finish()\n"  # another caller, unlocked
    assert decided(model, plain, qualified=True) == frozenset()
    recursive = "class Node:\n    def reopen(self):\n        self.reopen()\n"
    assert "reopen" not in decided(model, recursive)


def test_a_lock_decorator_holds_for_every_call_in_the_function() -> None:
    # huey's lock_task: one run at a time across workers; what the task calls runs under it
    locked = "@huey.periodic_task(crontab())\n@huey.lock_task('sweep')\ndef sweep(req):\n    req.close()\n"
    assert decided(DEFINED, locked) == {"close"}
    for decorator in (
        "huey.periodic_task(crontab())",  # scheduled, not locked: two runs may overlap
        "no_lock('sweep')",  # says none is taken
        "threading_utils.unlock_after('sweep')",  # releases, does not take
        "retry_on_lock_timeout('sweep')",  # retries, takes none
        "locked",  # called with no lock's name: an object's own lock
    ):
        caller = f"@{decorator}\ndef sweep(req):\n    req.close()\n"
        assert decided(DEFINED, caller, qualified=True) == frozenset(), decorator


def test_only_calls_under_a_lock_hold_the_row_for_a_test_made_inside() -> None:
    # a state filter chose the rows, but read them unlocked: a test in the method may be stale
    swept = "def sweep():\n    for req in Req.objects.filter(state__in=[1]):\n        req.close()\n"
    locked = "def view(pk):\n    req = Req.objects.select_for_update().get(pk=pk)\n    req.state\n    req.accept()\n"
    assert decided(DEFINED, swept, locked) == {"close", "accept"}
    assert decided(DEFINED, swept, locked, locked=True) == {"accept"}
    both = "def view2(pk):\n    req = Req.objects.select_for_update().get(pk=pk)\n    req.state\n    req.close()\n"
    assert decided(DEFINED, swept, both, locked=True, qualified=True) == frozenset()  # one caller holds no lock


def test_prose_and_docstrings_name_no_method() -> None:
    locked = "def view(req):\n    with cache.lock(req.pk):\n        req.close()\n"
    for prose in (
        'ERROR = "You cannot close a closed request"\n',  # a message
        '"""Close the request."""\n',  # a docstring
        'HELP = """Type \\""" to close."""\n',  # an escaped quote inside one
    ):
        assert decided(DEFINED, locked, prose) == {"close"}, prose
    for use in (
        'action = "close"\n',  # a name
        'STEPS = "close save".split()\n',  # names, not a sentence
        'TASK = "app.requests.close"\n',  # a dotted path
        'label = f"{close}"\n',  # an f-string's expression
        'label = "Closing the \\\nrequest", close, "done"\n',  # a string continued on the next line
        "on = {'x': close}  # 'quoted'\n",
        "go(close)  # it's closed\n",
    ):
        assert decided(DEFINED, locked, use, qualified=True) == frozenset(), use


def test_a_lock_every_caller_takes_holds_back_duplicate_runs() -> None:
    named = "def view(pk):\n    with cache.lock(pk):\n        Req.objects.get(pk=pk).close()\n"
    assert decided(DEFINED, named) == {"close"}  # a precondition of the callers' (IDM103)
    # a duplicate run of the caller waits for the same lock, as with `with lock:` inline (IDM101)
    assert decided(DEFINED, named, locked=True) == {"close"}
    maybe = "def view(pk, lock):\n    q = Req.objects.select_for_update() if lock else Req.objects\n    req = q.get(pk=pk)\n    req.close()\n"
    assert decided(DEFINED, maybe, qualified=True) == frozenset()  # the lock is taken in one branch only


TWO_CLASSES = (
    "class Preprint(Model):\n    state = 1\n    def decline(self): ...\n"
    "class Review(Model):\n    state = 1\n    def decline(self): ...\n"
)


def test_a_method_two_classes_define_is_judged_by_the_record_s_class() -> None:
    # each class's `decline`, where the caller's record says which class it is
    reviewer = "def view(pk):\n    review = get_object_or_404(Review, pk=pk, state__in=[1, 2])\n    review.decline()\n"
    manager = "def manage(pk):\n    preprint = Preprint.objects.get(pk=pk)\n    preprint.decline()\n"
    assert decided(TWO_CLASSES, reviewer, manager, qualified=True) == {"Review.decline"}
    unknown = "def other(thing):\n    thing.decline()\n"  # a record of no known class may be a review
    assert decided(TWO_CLASSES, reviewer, manager, unknown, qualified=True) == frozenset()
    inherited = "class Late(Review):\n    pass\n\ndef late(pk):\n    Late.objects.get(pk=pk).decline()\n"
    assert decided(TWO_CLASSES, reviewer, inherited, qualified=True) == frozenset()  # runs Review's decline
    own = "def mine(pk):\n    for review in Review.objects.filter(state=1):\n        review.decline()\n"
    assert decided(TWO_CLASSES, own, manager, qualified=True) == {"Review.decline"}


def test_a_module_s_function_of_the_method_s_name_is_not_the_method() -> None:
    view = (  # the view `decline` locks the review and runs its method `decline`
        "def decline(request, pk):\n"
        "    with cache.lock(pk):\n"
        "        review = Review.objects.get(pk=pk)\n"
        "        review.decline()\n\n"
        "def act(request, pk):\n"
        "    if 'decline' in request.POST:  # decline it, or leave it\n"
        "        return decline(request, pk)\n"
    )
    urls = (
        "from . import views as app_views\n"
        "# decline the review\n"
        'urlpatterns = [path("review/<int:pk>/decline/", app_views.decline, name="decline")]\n'
    )
    assert decided(TWO_CLASSES, view, urls, qualified=True) == {"Review.decline"}
    admin = (  # an admin class listing an imported action of the same name (parsed: it tests a state)
        "from app.actions import decline\n"
        "class ReviewAdmin:\n    actions = [decline]\n"
        "    def show(self, r):\n        if r.state == 1:\n            return\n"
    )
    assert decided(TWO_CLASSES, view, urls, admin, qualified=True) == {"Review.decline"}
    for method_named in (
        "def later(r, action):\n    if action in ('decline', 'open'):\n        getattr(r, action)()\n",
        # a class body names its own (a file with a state test, parsed)
        "class Admin:\n    def decline(self, request, *, quiet, loud=1):\n        if request.state == 1:\n"
        "            return\n    actions = [decline]\n",
        "import app\nhandler = app.Review.decline\n",  # a class's, through its module
        "from shop.current import offer\nTimer(60, offer.decline)\n",  # an imported object's, not a module's
        "app.send_task(name='app.reviews.decline', args=[1])\n",  # a task sent by its name
        'name = "decline"\ngetattr(review, name)()\n',  # a name held, then called by it
    ):
        assert decided(TWO_CLASSES, view, urls, method_named, qualified=True) == frozenset(), method_named


def test_an_admin_action_s_calls_are_the_operator_s_choice() -> None:
    annotated = (  # a ModelAdmin's action, its signature annotated and split over lines
        "class RequestAdmin(admin.ModelAdmin):\n    def close_selected(\n        self,\n        request: HttpRequest,\n"
        "        queryset: QuerySet,\n    ):\n        for req in queryset:\n            req.close()\n"
    )
    assert decided(DEFINED, annotated) == {"close"}
    plain = "def close_later(req):\n    req.close()\n"  # not an action: the caller holds nothing
    assert decided(DEFINED, annotated, plain) == frozenset()
    viewset = annotated.replace("RequestAdmin(admin.ModelAdmin)", "RequestViewSet(viewsets.ModelViewSet)")
    assert decided(DEFINED, viewset) == frozenset()  # a viewset's helper of the same shape is no admin action
