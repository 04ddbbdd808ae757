"""Calls that give what the next call of a chain is made on (`clients.client("neutron")` of
`clients.client("neutron").show_port(id)`, `self.get_cinder()` of `self.get_cinder().get_snapshot(id)`):
what the chain does is what its last call does, whatever the link's helper makes on its way (a
client, lazily)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from idemlint._lazy import LazyModule
from idemlint.analysis.model import ModuleModel
from idemlint.knowledge.repeats import names_an_action

if TYPE_CHECKING:
    import libcst as cst
else:
    cst = LazyModule("libcst", globals(), "cst")


def gives_a_receiver(model: ModuleModel, call: cst.Call, name: str) -> bool:
    """The call gives what the next call of a chain is made on, handed only constants
    (`client("neutron")` of `client("neutron").show_port(id)`, `client(version=V1_18).containers.
    network_list(id)`), and is named for no act."""
    link: cst.CSTNode | None = model.parents.get(call)
    if not isinstance(link, cst.Attribute) or names_an_action(name) or not all(_a_constant(a.value) for a in call.args):
        return False
    while isinstance(above := model.parents.get(link), cst.Attribute):  # `client(...).containers.network_list`
        link = above
    return isinstance(above, cst.Call) and above.func is link


def _a_constant(value: cst.BaseExpression) -> bool:
    """`"neutron"`, `2`, `self.V1_18`, `API_VERSION`: a literal or a name in capitals."""
    if isinstance(value, (cst.SimpleString, cst.Integer)):
        return True
    last = value.attr.value if isinstance(value, cst.Attribute) else value.value if isinstance(value, cst.Name) else ""
    return last.isupper()
