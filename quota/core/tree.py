"""Cohort tree arithmetic (PURE): nominal, lendable, available and borrowed quota.

ClusterQueues are the leaves, cohorts the inner nodes. Every node has quota per
(flavor, resource). A node's *subtree quota* is its own nominal quota plus what its
children lend to it; a child lends everything above its *guaranteed* quota, which is
what its ``lendingLimit`` keeps back for itself. Usage climbs the tree only once a node
has used up what it keeps for itself, so a cohort's usage is what its children draw from
the pool. The numbers follow Kueue's hierarchical cohort semantics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass
from typing import NamedTuple

from quota.core.model import ClusterQueue, Cohort, ResourceGroup
from quota.core.tree_trial import available_in, take_out

FlavorResource = tuple[str, str]  # (flavor, resource)


class TreeMark(NamedTuple):
    """A pool's versions at one moment (``QuotaTree.mark``)."""

    root: int
    version: int
    slots: dict[FlavorResource, int]


@dataclass(frozen=True, slots=True)
class Limits:
    nominal: int = 0
    borrowing_limit: int | None = None
    lending_limit: int | None = None


class _Node:
    __slots__ = ("available", "children", "guaranteed", "height", "is_queue", "limits", "name",
                 "parent", "potential", "slots", "subtree", "usage")

    def __init__(self, name: str, *, is_queue: bool) -> None:
        self.name = name
        self.is_queue = is_queue
        self.parent: _Node | None = None
        self.children: list[_Node] = []
        self.limits: dict[FlavorResource, Limits] = {}
        self.subtree: dict[FlavorResource, int] = {}
        self.guaranteed: dict[FlavorResource, int] = {}
        self.usage: dict[FlavorResource, int] = {}
        self.height = 0  # a ClusterQueue 0; a cohort one more than its highest child cohort
        # A ClusterQueue's: its pool's slot versions (shared by the pool's queues; see
        # ``QuotaTree``), and its memoised ``available`` (slot version, value) and
        # ``potential`` per slot: flavor assignment reads them for every pending workload.
        self.slots: dict[FlavorResource, int] = {}
        self.available: dict[FlavorResource, tuple[int, int]] = {}
        self.potential: dict[FlavorResource, int] = {}


def find_cohort_cycles(cohorts: Mapping[str, Cohort]) -> frozenset[str]:
    """Names of the cohorts that lie on, or hang below, a cycle of ``parent`` links."""
    bad: set[str] = set()
    good: set[str] = set()
    for start in sorted(cohorts):
        path: list[str] = []
        seen: set[str] = set()
        name: str | None = start
        while name is not None and name not in good and name not in bad:
            if name in seen:
                bad.update(path)
                break
            seen.add(name)
            path.append(name)
            cohort = cohorts.get(name)
            name = cohort.parent if cohort is not None else None
        else:
            (bad if name is not None and name in bad else good).update(path)
    return frozenset(bad)


def _limits(groups: Iterable[ResourceGroup]) -> dict[FlavorResource, Limits]:
    out: dict[FlavorResource, Limits] = {}
    for group in groups:
        for flavor in group.flavors:
            for quota in flavor.resources:
                out[(flavor.flavor, quota.resource)] = Limits(
                    quota.nominal, quota.borrowing_limit, quota.lending_limit
                )
    return out


class QuotaTree:
    """Mutable quota arithmetic over one snapshot's cohort forest; usage changes as a cycle
    admits and evicts. The forest holds every ClusterQueue and every declared cohort, with
    or without queues below it; cohorts named but not declared exist implicitly with no
    quota, as in Kueue; cohorts on a parent cycle are cut off (see ``broken_cohorts``)."""

    def __init__(
        self, cluster_queues: Iterable[ClusterQueue], cohorts: Mapping[str, Cohort]
    ) -> None:
        self.broken_cohorts = find_cohort_cycles(cohorts)
        self._queues: dict[str, _Node] = {}
        self._cohorts: dict[str, _Node] = {}
        for cq in cluster_queues:
            node = _Node(cq.name, is_queue=True)
            node.limits = _limits(cq.resource_groups)
            self._queues[cq.name] = node
            if cq.cohort is not None and cq.cohort not in self.broken_cohorts:
                self._attach(node, self._cohort(cq.cohort, cohorts))
        # Every declared cohort counts, not only those above a ClusterQueue: a cohort with
        # no queue below it still lends its own quota (within its lending limit) up the tree.
        for name in sorted(cohorts):
            if name not in self.broken_cohorts:
                self._cohort(name, cohorts)
        for root in self._roots():
            _compute_subtree(root)
        self._root_of: dict[str, _Node] = {}
        # Per pool, bumped per (flavor, resource) on usage changes of that resource only:
        # what a queue has available of one resource survives admissions of others.
        self._slot_versions: dict[int, dict[FlavorResource, int]] = {}
        self._members: dict[int, tuple[str, ...]] = {}
        for name, node in self._queues.items():
            top = node
            while top.parent is not None:
                top = top.parent
            self._root_of[name] = top
            node.slots = self._slot_versions.setdefault(id(top), {})
        self._root_name = {name: ("cohort:" if not top.is_queue else "queue:") + top.name
                           for name, top in self._root_of.items()}
        # Bumped on every usage change inside a root pool: lets callers cache by state.
        # Every version is a fresh value of one clock, so none is ever given to two
        # states: ``restore`` may hand a trial's pool back the versions it had before.
        self._clock = 0
        self._versions: dict[int, int] = {}
        # Pool-wide answers, memoised per pool version: one scan serves all its members.
        # Per (pool, slot): the ClusterQueues using more than their nominal quota of it,
        # kept as usage changes: victim searches ask for them thousands of times a cycle.
        self._borrowing: dict[tuple[int, FlavorResource], set[str]] = {}
        self._ranking: dict[tuple[int, FlavorResource, int], list[tuple[int, str]]] = {}

    def _cohort(self, name: str, cohorts: Mapping[str, Cohort]) -> _Node:
        node = self._cohorts.get(name)
        if node is not None:
            return node
        node = _Node(name, is_queue=False)
        self._cohorts[name] = node
        spec = cohorts.get(name)
        if spec is not None:
            node.limits = _limits(spec.resource_groups)
            if spec.parent is not None:
                self._attach(node, self._cohort(spec.parent, cohorts))
        return node

    @staticmethod
    def _attach(child: _Node, parent: _Node) -> None:
        child.parent = parent
        parent.children.append(child)

    def _roots(self) -> list[_Node]:
        nodes = [*self._queues.values(), *self._cohorts.values()]
        return [node for node in nodes if node.parent is None]

    # --- reading -------------------------------------------------------------------------

    def has_queue(self, cq: str) -> bool:
        return cq in self._queues

    def root(self, cq: str) -> str:
        """A stable name for the independent quota pool the ClusterQueue belongs to."""
        return self._root_name[cq]

    def version(self, cq: str) -> int:
        """A counter of usage changes in the ClusterQueue's pool (equal: nothing changed)."""
        return self._versions.get(id(self._root_of[cq]), 0)

    def mark(self, cq: str) -> TreeMark:
        """The versions of ``cq``'s pool now, for ``restore`` after a trial."""
        root = id(self._root_of[cq])
        return TreeMark(root, self._versions.get(root, 0), dict(self._slot_versions[root]))

    def restore(self, mark: TreeMark) -> None:
        """Give the pool back the versions of ``mark``: a victim search removes and adds
        back usage to try a set, and caches of the state it restored stay valid. The
        caller has put back exactly the usage it had at ``mark``."""
        root, slots, saved = mark.root, self._slot_versions[mark.root], mark.slots
        self._versions[root] = mark.version
        for fr in slots:
            slots[fr] = saved.get(fr, 0)

    def slot_versions(self, cq: str, frs: Iterable[FlavorResource]) -> tuple[int, ...]:
        """Per slot of ``frs``, a counter of its usage changes in the ClusterQueue's pool."""
        versions = self._queues[cq].slots
        return tuple([versions.get(fr, 0) for fr in frs])

    def limits(self, cq: str, fr: FlavorResource) -> Limits:
        return self._queues[cq].limits.get(fr, _NO_LIMITS)

    def nominal(self, cq: str, fr: FlavorResource) -> int:
        return self.limits(cq, fr).nominal

    def usage(self, cq: str, fr: FlavorResource) -> int:
        return self._queues[cq].usage.get(fr, 0)

    def borrowed(self, cq: str, fr: FlavorResource) -> int:
        """How much of ``fr`` the ClusterQueue uses above its nominal quota."""
        return max(0, self.usage(cq, fr) - self.nominal(cq, fr))

    def flavor_resources(self, cq: str) -> list[FlavorResource]:
        """Every (flavor, resource) the ClusterQueue has quota for or uses."""
        node = self._queues[cq]
        return sorted(set(node.limits) | set(node.usage))

    def borrowers(self, cq: str, frs: Iterable[FlavorResource]) -> list[str]:
        """The other ClusterQueues of the pool using more than nominal of any of ``frs``,
        sorted."""
        found = self.borrowing_members(cq, frs)
        found.discard(cq)
        return sorted(found)

    def borrowing_members(self, cq: str, frs: Iterable[FlavorResource]) -> set[str]:
        """The ClusterQueues of the pool, ``cq`` itself included, using more than nominal
        of any of ``frs`` (a new set)."""
        root = id(self._root_of[cq])
        found: set[str] = set()
        for fr in frs:
            names = self._borrowing.get((root, fr))
            if names:
                found.update(names)
        return found

    def borrowing_sets(self, cq: str, frs: Iterable[FlavorResource]) -> list[Set[str]]:
        """Per slot of ``frs``, the ClusterQueues of the pool using more than nominal of it
        (``borrowed`` > 0), ``cq`` itself included (do not modify)."""
        root, borrowing = id(self._root_of[cq]), self._borrowing
        return [borrowing.get((root, fr), _NOBODY) for fr in frs]

    def borrowed_ranking(self, cq: str, fr: FlavorResource) -> list[tuple[int, str]]:
        """``(-borrowed, name)`` of every pool member borrowing ``fr``, most first, the
        ClusterQueue itself included (memoised per pool version; do not modify the list)."""
        root = id(self._root_of[cq])
        key = (root, fr, self._versions.get(root, 0))
        ranking = self._ranking.get(key)
        if ranking is None:
            ranking = sorted((-amount, name) for name in self.members(cq)
                             if (amount := self.borrowed(name, fr)) > 0)
            self._ranking[key] = ranking
        return ranking

    def in_cohort(self, cq: str) -> bool:
        return self._queues[cq].parent is not None

    def in_nested_cohort(self, cq: str) -> bool:
        """Whether the ClusterQueue's cohort itself hangs below another cohort."""
        parent = self._queues[cq].parent
        return parent is not None and parent.parent is not None

    def available(self, cq: str, fr: FlavorResource) -> int:
        """What the ClusterQueue could take of ``fr`` right now (own unused + borrowable)."""
        node = self._queues[cq]
        version = node.slots.get(fr, 0)
        cached = node.available.get(fr)
        if cached is not None and cached[0] == version:
            return cached[1]
        value = max(0, _available(node, fr))
        node.available[fr] = (version, value)
        return value

    def after_removal(self, cq: str, removals: Mapping[str, Mapping[FlavorResource, int]],
                      frs: Iterable[FlavorResource]) -> list[tuple[int, int]]:
        """Per slot of ``frs``, ``(available, usage)`` of the ClusterQueue were ``removals``
        (queue -> usage) taken out of the tree, which stays as it is (``tree_trial``)."""
        node, queues, out = self._queues[cq], self._queues, []
        for fr in frs:
            overlay: dict[_Node, int] = {}
            for name, amounts in removals.items():
                amount = amounts.get(fr, 0)
                if amount:
                    take_out(queues[name], fr, amount, overlay)
            if not overlay:
                out.append((self.available(cq, fr), node.usage.get(fr, 0)))
                continue
            usage = overlay.get(node)
            out.append((max(0, available_in(node, fr, overlay)),
                        node.usage.get(fr, 0) if usage is None else usage))
        return out

    def measure(self, cq: str, fr: FlavorResource) -> tuple[int, int, int, int]:
        """``(available, potential, usage, nominal)`` in one call, for flavor assignment."""
        node = self._queues[cq]
        # ``available`` and ``potential`` from their caches inline: the hottest read.
        cached = node.available.get(fr)
        if cached is not None and cached[0] == node.slots.get(fr, 0):
            available = cached[1]
        else:
            available = self.available(cq, fr)
        potential = node.potential.get(fr)
        if potential is None:
            potential = node.potential[fr] = _potential(node, fr)
        return (available, potential, node.usage.get(fr, 0),
                node.limits.get(fr, _NO_LIMITS).nominal)

    def potential(self, cq: str, fr: FlavorResource) -> int:
        """The most of ``fr`` the ClusterQueue could ever hold if nothing else used any."""
        node = self._queues[cq]
        value = node.potential.get(fr)
        if value is None:
            value = node.potential[fr] = _potential(node, fr)
        return value

    def lendable(self, cq: str, fr: FlavorResource) -> int:
        """The pool the ClusterQueue's cohort could lend for ``fr`` (0 outside a cohort)."""
        parent = self._queues[cq].parent
        return 0 if parent is None else parent.subtree.get(fr, 0)

    def pool_height(self, cq: str) -> int:
        """The height of the ClusterQueue's cohort tree: 0 alone, 1 in a flat cohort."""
        return self._root_of[cq].height

    def borrowing_height(self, cq: str, fr: FlavorResource, amount: int) -> tuple[int, bool]:
        """How far up the tree the ClusterQueue must borrow to take ``amount`` more of
        ``fr`` now: the height of the lowest subtree above it whose quota holds it (0 within
        its own nominal quota; the whole tree's height when none does), and whether that
        subtree lies below the root, where reclaiming from work borrowing from further up
        could make room. Kueue's ``FindHeightOfLowestSubtreeThatFits``."""
        node = self._queues[cq]
        usage = node.usage.get(fr, 0)
        parent = node.parent
        if parent is None or usage + amount <= node.limits.get(fr, _NO_LIMITS).nominal:
            return 0, parent is not None
        remaining = amount - max(0, node.guaranteed.get(fr, 0) - usage)
        top = parent
        current: _Node | None = parent
        while current is not None:
            used = current.usage.get(fr, 0)
            if used + remaining <= current.subtree.get(fr, 0):
                return current.height, current.parent is not None
            remaining -= max(0, current.guaranteed.get(fr, 0) - used)
            top, current = current, current.parent
        return top.height, False

    def parents(self, cq: str) -> tuple[str, ...]:
        """The cohorts above the ClusterQueue, its own first, the root last."""
        out: list[str] = []
        node = self._queues[cq].parent
        while node is not None:
            out.append(node.name)
            node = node.parent
        return tuple(out)

    def children(self, cohort: str) -> tuple[list[str], list[str]]:
        """A cohort's child cohorts and child ClusterQueues, in declaration order."""
        node = self._cohorts[cohort]
        return ([c.name for c in node.children if not c.is_queue],
                [c.name for c in node.children if c.is_queue])

    def over_quota(self, name: str, frs: Iterable[FlavorResource], *, cohort: bool) -> bool:
        """Whether the node (a cohort, or a ClusterQueue) uses more than its subtree quota
        of any of ``frs``: only such nodes hold quota lent from elsewhere."""
        node = self._cohorts[name] if cohort else self._queues[name]
        return any(node.usage.get(fr, 0) > node.subtree.get(fr, 0) for fr in frs)

    def borrows_for(self, cq: str, usage: Mapping[FlavorResource, int]) -> bool:
        """Whether the ClusterQueue goes over its nominal quota in any slot once ``usage``
        more is added to it (it borrows to take it)."""
        return any(self.usage(cq, fr) + amount > self.nominal(cq, fr)
                   for fr, amount in usage.items())

    def fits_in(self, name: str, requests: Mapping[FlavorResource, int], *,
                cohort: bool) -> tuple[bool, dict[FlavorResource, int]]:
        """Whether ``requests`` more fit the node's subtree quota, and what is left of them
        once what the node keeps for itself (its lending limit) is used up."""
        node = self._cohorts[name] if cohort else self._queues[name]
        fits = True
        left: dict[FlavorResource, int] = {}
        for fr, amount in requests.items():
            used = node.usage.get(fr, 0)
            if used + amount > node.subtree.get(fr, 0):
                fits = False
            left[fr] = max(0, amount - max(0, node.guaranteed.get(fr, 0) - used))
        return fits, left

    def cohort_usage(self, cohort: str, fr: FlavorResource) -> int:
        node = self._cohorts.get(cohort)
        return 0 if node is None else node.usage.get(fr, 0)

    def cohort_quota(self, cohort: str, fr: FlavorResource) -> int:
        """A cohort's subtree quota: own nominal plus what its members lend to it."""
        node = self._cohorts.get(cohort)
        return 0 if node is None else node.subtree.get(fr, 0)

    def members(self, cq: str) -> tuple[str, ...]:
        """Every ClusterQueue sharing the ClusterQueue's root pool, itself included, sorted."""
        root = self._root_of[cq]
        cached = self._members.get(id(root))
        if cached is not None:
            return cached
        out: list[str] = []
        stack = [root]
        while stack:
            current = stack.pop()
            if current.is_queue:
                out.append(current.name)
            stack.extend(current.children)
        members = tuple(sorted(out))
        self._members[id(root)] = members
        return members

    # --- writing -------------------------------------------------------------------------

    def add(self, cq: str, usage: Mapping[FlavorResource, int]) -> None:
        node = self._queues[cq]
        root = self._bump(cq)
        slots, clock = node.slots, self._clock
        for fr, amount in usage.items():
            if amount:
                _add(node, fr, amount)
                slots[fr] = clock
                if node.usage[fr] > node.limits.get(fr, _NO_LIMITS).nominal:
                    self._borrowing.setdefault((root, fr), set()).add(cq)

    def remove(self, cq: str, usage: Mapping[FlavorResource, int]) -> None:
        node = self._queues[cq]
        root = self._bump(cq)
        slots, clock = node.slots, self._clock
        for fr, amount in usage.items():
            if amount:
                _remove(node, fr, amount)
                slots[fr] = clock
                if node.usage.get(fr, 0) <= node.limits.get(fr, _NO_LIMITS).nominal:
                    self._borrowing.get((root, fr), set()).discard(cq)

    def _bump(self, cq: str) -> int:
        key = id(self._root_of[cq])
        self._clock += 1
        self._versions[key] = self._clock
        return key


_NO_LIMITS = Limits()
_NOBODY: frozenset[str] = frozenset()


def _compute_subtree(node: _Node) -> None:
    subtree = {fr: limit.nominal for fr, limit in node.limits.items()}
    if not node.is_queue:
        node.height = min(len(node.children), 1)
    for child in node.children:
        _compute_subtree(child)
        if not child.is_queue:
            node.height = max(node.height, child.height + 1)
        for fr, amount in child.subtree.items():
            subtree[fr] = subtree.get(fr, 0) + amount - child.guaranteed.get(fr, 0)
    node.subtree = subtree
    for fr, limit in node.limits.items():
        if limit.lending_limit is not None:
            node.guaranteed[fr] = max(0, subtree.get(fr, 0) - limit.lending_limit)


def _available(node: _Node, fr: FlavorResource) -> int:
    usage = node.usage.get(fr, 0)
    parent = node.parent
    if parent is None:
        return node.subtree.get(fr, 0) - usage
    guaranteed = node.guaranteed.get(fr, 0)
    from_parent = _available(parent, fr)
    limit = node.limits.get(fr)
    if limit is not None and limit.borrowing_limit is not None:
        stored = node.subtree.get(fr, 0) - guaranteed
        used_in_parent = max(0, usage - guaranteed)
        from_parent = min(from_parent, stored - used_in_parent + limit.borrowing_limit)
    return max(0, guaranteed - usage) + from_parent


def _potential(node: _Node, fr: FlavorResource) -> int:
    parent = node.parent
    if parent is None:
        return node.subtree.get(fr, 0)
    total = node.guaranteed.get(fr, 0) + _potential(parent, fr)
    limit = node.limits.get(fr)
    if limit is not None and limit.borrowing_limit is not None:
        total = min(total, node.subtree.get(fr, 0) + limit.borrowing_limit)
    return total


def _add(node: _Node, fr: FlavorResource, amount: int) -> None:
    usage = node.usage.get(fr, 0)
    kept = max(0, node.guaranteed.get(fr, 0) - usage)
    node.usage[fr] = usage + amount
    if node.parent is not None and amount > kept:
        _add(node.parent, fr, amount - kept)


def _remove(node: _Node, fr: FlavorResource, amount: int) -> None:
    usage = node.usage.get(fr, 0)
    in_parent = usage - node.guaranteed.get(fr, 0)
    node.usage[fr] = usage - amount
    if node.parent is not None and in_parent > 0:
        _remove(node.parent, fr, min(amount, in_parent))
