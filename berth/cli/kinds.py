"""The kinds the CLI names: the ledger's (``quota.core.kinds``) and workloads."""

from __future__ import annotations

from quota.core.errors import BerthError, NotFound
from quota.core.kinds import KINDS, Kind, resolve_kind

WORKLOAD = Kind("Workload", "workloads", namespaced=True)
_WORKLOAD_NAMES = ("workload", "workloads", "wl", "job", "jobs")


class BadName(BerthError):
    """A name on the command line that is not of the form the command needs."""

    status = 422
    code = "InvalidInput"


def resolve(text: str) -> Kind:
    """A kind by any name ``berth get`` takes (``wl`` and ``workloads`` too); an unknown
    one is a ``NotFound`` naming every kind."""
    if text.lower() in _WORKLOAD_NAMES:
        return WORKLOAD
    try:
        return resolve_kind(text)
    except NotFound:
        choices = ", ".join([*(k.plural for k in KINDS), WORKLOAD.plural])
        raise NotFound(f"unknown kind {text!r}; expected one of: {choices}", field="kind") from None


def workload_key(text: str, namespace: str | None) -> tuple[str, str]:
    """``NAMESPACE/NAME``, or ``NAME`` with ``-n NAMESPACE``."""
    given, slash, name = text.partition("/")
    if slash and given and name and "/" not in name:
        if namespace and namespace != given:
            raise BadName(f"{text!r} is not in namespace {namespace!r}", field="namespace")
        return given, name
    if not slash and namespace:
        return namespace, text
    raise BadName(f"{text!r}: expected NAMESPACE/NAME, or NAME with -n NAMESPACE", field="name")
