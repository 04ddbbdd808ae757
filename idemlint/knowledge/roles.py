"""What a module's imports say about the code in it."""

from __future__ import annotations

import re

# test support: pytest's fixtures and factory_boy's model factories build rows for tests,
# wherever the file sits (`app/factories.py`, `core/factory.py`): a module importing pytest at
# its top, or defining a class on one of factory_boy's factory classes
TEST_SUPPORT_IMPORTS = frozenset({"pytest"})
# what a program calls to run until it is stopped: an event loop's `run_forever()`, a socket
# server's `serve_forever()`. Such a program is a service (a daemon, a bot), not a script someone
# runs and watches to its end
SERVES_FOREVER = frozenset({"run_forever", "serve_forever"})
TEST_FACTORY_BASES = frozenset(
    {
        "factory.Factory",
        "factory.DictFactory",
        "factory.ListFactory",
        "factory.StubFactory",
        "factory.base.Factory",
        "factory.django.DjangoModelFactory",
        "factory.alchemy.SQLAlchemyModelFactory",
        "factory.mongoengine.MongoEngineFactory",
        "factory.mogo.MogoFactory",
    }
)

# what runs a function with no caller in the project to hand a result back to, by the
# decorator's last name: a task queue (`@shared_task`, `@app.task`, `@actor`,
# `@register_as_period_task`), a signal (`@receiver(...)`, `@signals.task_postrun.connect`), a
# scheduler (`@scheduler.scheduled_job`), a web route (`@app.route`, `@api_view`); an HTTP
# verb only on a receiver (`@app.post(...)`, `@router.get(...)`), not `@cached_get`
ENTRY_DECORATORS = frozenset(
    {"task", "shared_task", "actor", "receiver", "connect", "scheduled_job", "cron", "route", "api_view", "websocket"}
)
ENTRY_VERBS = frozenset({"get", "post", "put", "patch", "delete"})
ENTRY_SUFFIX = "_task"  # `periodic_task`, `db_periodic_task`, `register_as_period_task`
# of those, a task queue's: the task is handed what the project queued (`task.delay(row.pk)`)
QUEUE_DECORATORS = frozenset({"task", "shared_task", "actor"})

# a view: Django and DRF hand the request first (`def flag(request, pk)`, `def post(self, request)`)
# and take its return themselves. A method is one by its class (a view, viewset or view mixin)
# and its name (an HTTP verb or a DRF viewset action, or `@action`); a function by what it
# returns (a response, a render, a redirect), since a helper may take the request too and hand
# its outcome to a view
VIEW_REQUEST_PARAMETER = "request"
VIEW_CLASS = re.compile(r"(View|ViewSet|Mixin)$")
VIEW_METHODS = ENTRY_VERBS | {"create", "update", "partial_update", "destroy", "list", "retrieve"}
VIEW_DECORATORS = frozenset({"action"})
VIEW_RESPONSE = re.compile(
    r"^(\w*Response\w*|render|render_to_response|redirect|HttpResponse\w*"
    r"|jsonify|make_response|render_template|render_template_string)$"  # Flask's
)
# a record turned into plain data for a response (`entry.to_dict()`, pydantic's `model_dump()`):
# it computes, it changes nothing
SERIALISER = re.compile(r"^(?:(?:to|as)_(?:dict|json|representation)|model_dump(?:_json)?)$")

# an operator's tool: a Django admin action, run on the rows the operator picked (`def
# mark_paid(modeladmin, request, queryset)`, a ModelAdmin's `def mark_paid(self, request,
# queryset)`, `@admin.action(...)`), or a helper handed the admin (`modeladmin` first). The state
# it sets is the operator's choice, also where it moves a row back
ADMIN_FIRST_PARAMETER = "modeladmin"
ADMIN_ACTION_PARAMETERS = ("request", "queryset")
ADMIN_ACTION_DECORATOR = "admin.action"


def is_admin_action(params: list[str], decorators: list[str], owner_bases: list[str]) -> bool:
    """By the function's positional parameter names, its decorators' dotted names and, for a
    method, its class's bases (a `ModelAdmin`'s: a viewset's `(self, request, queryset)` helper
    is no operator's action)."""
    if params[:1] == [ADMIN_FIRST_PARAMETER] or ADMIN_ACTION_DECORATOR in decorators:
        return True
    return tuple(params[1:3]) == ADMIN_ACTION_PARAMETERS and any(b.endswith("Admin") for b in owner_bases)


# what an RPC server's endpoint class declares (`target = oslo_messaging.Target(version=...)`):
# its public methods are dispatched from messages a cast sends at most once, never redelivered
RPC_ENDPOINT_TARGETS = frozenset({"oslo_messaging.Target", "oslo.messaging.Target"})
