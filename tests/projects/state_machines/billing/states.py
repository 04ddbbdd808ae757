"""The lifecycle the business allows, written down once."""

import enum


class IntentState(str, enum.Enum):
    CREATED = "created"
    PAID = "paid"
    FULFILLED = "fulfilled"
    ERRORED = "errored"
    EXPIRED = "expired"


class RoomStatus(str, enum.Enum):
    CREATED = "created"
    DELETED = "deleted"


# FULFILLED is the end of the road; an expired intent may be started again
ALLOWED_MOVES = {
    IntentState.CREATED: [IntentState.PAID, IntentState.EXPIRED],
    IntentState.PAID: [IntentState.FULFILLED, IntentState.ERRORED],
    IntentState.ERRORED: [IntentState.FULFILLED],
    IntentState.EXPIRED: [IntentState.CREATED],
    IntentState.FULFILLED: [],
}

# not a machine: the values are labels, not states of the same enum
LABELS = {
    IntentState.CREATED: ["New"],
    IntentState.PAID: ["Paid"],
}
