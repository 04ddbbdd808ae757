from billing.models import Intent, Room, Ticket
from billing.states import IntentState, RoomStatus
from billing.states import IntentState as S


def fulfil(intent_id):
    intent = Intent.objects.get(pk=intent_id)
    intent.state = IntentState.FULFILLED  # ok: IDM103 every state the declared machine has leads to FULFILLED
    intent.save()


def fulfil_through_an_alias(intent_id):
    intent = Intent.objects.get(pk=intent_id)
    intent.state = S.FULFILLED  # ok: IDM103 the same state, its enum imported under another name
    intent.save()


def give_up(intent_id, error):
    intent = Intent.objects.get(pk=intent_id)
    intent.last_error = str(error)
    # expect: IDM103 "the project's state machine never leads from FULFILLED to ERRORED, so this moves such a record back"
    intent.state = IntentState.ERRORED
    intent.save()


def restart(intent_id):
    # expect: IDM103 "never leads from ERRORED, FULFILLED or PAID to CREATED"
    Intent.objects.filter(pk=intent_id).update(state=IntentState.CREATED)


def room_deleted(room_id):
    room = Room.objects.get(pk=room_id)
    room.status = RoomStatus.DELETED  # ok: IDM103 a tombstone: a deletion may follow any state
    room.save()


def room_reopened(room_id):
    room = Room.objects.get(pk=room_id)
    room.status = RoomStatus.CREATED  # expect: IDM103 "sets status to RoomStatus.CREATED with no precondition"
    room.save()


def ticket_closed(ticket_id):
    ticket = Ticket.objects.get(pk=ticket_id)
    ticket.state = "closed"  # ok: IDM103 the transition decorators lead every state to closed
    ticket.save()


def ticket_reopened(ticket_id):
    ticket = Ticket.objects.get(pk=ticket_id)
    ticket.state = "open"  # expect: IDM103 "never leads from closed to open"
    ticket.save()
