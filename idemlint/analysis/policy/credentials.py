"""A retry after renewing credentials: the branch that goes round on an answer asking for them
(401, 407) first calls for new ones (`self.refresh_token()`, `login()`) or drops the ones it
holds (`self._token = None`, a global `AUTH_TOKEN = None`) where the next attempt reads them
again (in the loop, or in a function of this module the loop calls). Such a retry can succeed;
one that resends the same credentials cannot."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import iter_nodes, local_callee
from idemlint.analysis.policy.no_wait import dropped_state
from idemlint.analysis.timeouts import LOGGING_CALL
from idemlint.knowledge.retries import CREDENTIAL_RENEWAL, CREDENTIAL_RENEWAL_FLAG, CREDENTIAL_STATE

if TYPE_CHECKING:
    import libcst as cst

    from idemlint.analysis.model import ModuleModel
else:
    cst = LazyModule("libcst", globals(), "cst")


def renews_credentials(model: ModuleModel, branch: cst.If, loop: cst.CSTNode) -> bool:
    logged = [
        n for n in iter_nodes(branch.body) if isinstance(n, cst.Call) and LOGGING_CALL.match(model.dotted(n.func) or "")
    ]
    for node in iter_nodes(branch.body):
        if isinstance(node, cst.Call) and not any(model.is_inside(node, log) for log in logged):
            name = model.call_name(node) or model.dotted(node.func) or ""
            if CREDENTIAL_RENEWAL.search(name.rsplit(".", 1)[-1]) or _asks_for_renewal(node):
                return True  # not `log.warning(..., mask_token(token))`
        for name, _attribute in dropped_state(model, node):
            if CREDENTIAL_STATE.search(name) and _read_again(model, name, loop, branch):
                return True
    return False


def _read_again(model: ModuleModel, name: str, loop: cst.CSTNode, branch: cst.CSTNode) -> bool:
    """`name` (an attribute's or a shared name) is read in the loop outside `branch`, or in a
    function of this module the loop calls."""
    body = getattr(loop, "body", loop)
    nodes = [n for n in iter_nodes(body) if not model.is_inside(n, branch)]
    callees = [local_callee(model, n) for n in nodes if isinstance(n, cst.Call)]
    for node in nodes + [n for f in callees if f is not None for n in iter_nodes(f.body)]:
        if (
            isinstance(node, cst.Attribute)
            and node.attr.value == name
            or isinstance(node, cst.Name)
            and node.value == name
        ):
            return True
    return False


def _asks_for_renewal(call: cst.Call) -> bool:
    """`self._prepare(params, auth, reauth=True)`, `client.token(force_refresh=True)`: a call told
    by a flag to renew the credentials it hands out."""
    return any(
        arg.keyword is not None
        and CREDENTIAL_RENEWAL_FLAG.match(arg.keyword.value)
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "True"
        for arg in call.args
    )
