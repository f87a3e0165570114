"""Usage of a quota tree as if some were taken out (PURE), without touching the tree.

``QuotaTree.after_removal`` answers "what could this ClusterQueue take if these queues
gave back this much" with the same arithmetic as ``remove`` then ``available``, into a
scratch overlay of node usages: no versions bumped, no caches dropped, nothing to put
back. Victim searches ask it to prove that no set of candidates can make room.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the tree owns its nodes and imports this module
    from quota.core.tree import FlavorResource, _Node


def take_out(node: _Node, fr: FlavorResource, amount: int, overlay: dict[_Node, int]) -> None:
    """``_remove`` of the tree, writing the nodes' new usage of ``fr`` into ``overlay``."""
    while True:
        usage = overlay.get(node)
        if usage is None:
            usage = node.usage.get(fr, 0)
        in_parent = usage - node.guaranteed.get(fr, 0)
        overlay[node] = usage - amount
        parent = node.parent
        if parent is None or in_parent <= 0:
            return
        node, amount = parent, min(amount, in_parent)


def available_in(node: _Node, fr: FlavorResource, overlay: dict[_Node, int]) -> int:
    """``_available`` of the tree, reading usage from ``overlay`` where it has a node."""
    usage = overlay.get(node)
    if usage is None:
        usage = node.usage.get(fr, 0)
    parent = node.parent
    if parent is None:
        return node.subtree.get(fr, 0) - usage
    guaranteed = node.guaranteed.get(fr, 0)
    from_parent = available_in(parent, fr, overlay)
    limit = node.limits.get(fr)
    if limit is not None and limit.borrowing_limit is not None:
        stored = node.subtree.get(fr, 0) - guaranteed
        used_in_parent = max(0, usage - guaranteed)
        from_parent = min(from_parent, stored - used_in_parent + limit.borrowing_limit)
    return max(0, guaranteed - usage) + from_parent
