"""Check-then-insert through a reverse manager (`copy.loans`) and through the project's own
helpers: the query finds no row, then a helper inserts one. Only where the function loaded the
parent row itself (`copy = Copy.objects.get(...)`): a parent handed in or loaded by a helper
may be held under a lock out of view, so a query on it, or a helper's insert after a plain
query, is left alone."""

from library.models import Copy, Label, Loan, Member, Request, Visit
from library.desk import checkout
from library.services import open_loan


def borrow(copy_id, member_id):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.loans.filter(member=member).exists():
        return None
    return Loan.objects.create(copy=copy, member=member)  # expect: IDM101 "inserts the loan row that the query on line 15 found absent"


def borrow_by_method(copy_id, member_id):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.loans.filter(member=member).exists():
        return None
    return copy.lend_to(member)  # expect: IDM101 "copy.lend_to() inserts the loan row (through _record_loan() -> Loan.objects.create())"


def borrow_by_service(copy_id, member_id):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if not copy.loans.filter(member=member).exists():
        open_loan(copy, member)  # expect: IDM101 "open_loan() inserts the loan row (through Loan.objects.create())"


def place_hold(copy_id, member_id):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.holds.filter(member=member).exists():
        return None
    return copy.hold_for(member)  # ok: IDM101 the hold's (copy, member) is unique: a second insert fails


def reserve(copy_id, member_id):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.reservations.filter(member=member).exists():
        return None
    return copy.reserve_for(member)  # ok: IDM101 get_or_create is no plain insert


def join_waitlist(copy_id, member_id):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.waitlist.filter(member=member).exists():
        return None
    return copy.queue_for(member)  # ok: IDM101 the helper takes the duplicate error


def record_visit(copy_id, member_id):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.loans.filter(member=member).exists():
        return None
    return copy.note_visit(member)  # ok: IDM101 a visit is another model than the loan queried


def label_once(copy_id, text):
    copy = Copy.objects.get(pk=copy_id)
    if copy.labels.filter(text=text).exists():
        return None
    return Label.objects.create(copy=copy, text=text)  # ok: IDM101 `labels` names two models' managers: unknown


def visit_once(copy, member, seen):
    if seen.visits.get("today"):
        return None
    return Visit.objects.create(copy=copy, member=member)  # ok: IDM101 a dict's get by position is no query


def lend_locked(copy_id, member_id):
    copy = Copy.objects.select_for_update().get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.loans.filter(member=member).exists():
        return None
    return copy.lend_to(member)  # ok: IDM101 the copy's row lock is taken first


def borrow_handed_copy(copy, member):
    if copy.loans.filter(member=member).exists():
        return None
    return copy.lend_to(member)  # ok: IDM101 the copy came from a caller, which may hold its lock


def borrow_by_plain_query(copy_id, member_id):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if Loan.objects.filter(copy=copy, member=member).exists():
        return None
    return copy.lend_to(member)  # ok: IDM101 a helper's insert is followed only under a parent row in view


def book_day(copy_id, member_id, day):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.bookings.filter(member=member).exists():
        return None
    return copy.bookings.create(member=member, day=day)  # ok: IDM101 the manager's key, copy, completes the unique (copy, member, day)


def book_by_method(copy_id, member_id, day):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.bookings.filter(member=member).exists():
        return None
    return copy.book(member, day)  # ok: IDM101 the booking has a unique key the helper's insert may name


def request_title(member_id, title):
    member = Member.objects.get(pk=member_id)
    if member.requests.filter(title=title).exists():
        return None
    return Request.objects.create(member=member, title=title)  # expect: IDM101 "found absent by (title, member)"


def borrow_at_desk(copy_id, member_id):
    copy = Copy.objects.get(pk=copy_id)
    member = Member.objects.get(pk=member_id)
    if copy.loans.filter(member=member).exists():
        return None
    return checkout(copy, member)  # expect: IDM101 "checkout() inserts the loan row that the query"
