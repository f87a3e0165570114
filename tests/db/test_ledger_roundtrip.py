"""Property: whatever the ledger stores, it reads back equal (real PostgreSQL, modest examples)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy.orm import Session

from quota.core.checks import (
    AdmissionCheck,
    CheckRule,
    ParametersRef,
    ProvisioningRequestConfig,
    RetryStrategy,
)
from quota.core.model import (
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    LabelSelector,
    LocalQueue,
    Namespace,
    Node,
    NodeCondition,
    NodeHealth,
    Preemption,
    PriorityClass,
    QueueingStrategy,
    ReclaimWithinCohort,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    SelectorRequirement,
    StopPolicy,
    Taint,
    Toleration,
    Topology,
    WhenCanBorrow,
    WhenCanPreempt,
    WithinClusterQueue,
)
from quota.core.workload import (
    Admission,
    PodSet,
    PodSetAssignment,
    PodSetPlacement,
    Workload,
    WorkloadState,
)
from quota.ledger.repository import Ledger
from quota.manifests.checks import MERGE_POLICIES

# The database stores every Unicode character except NUL and lone surrogates.
text = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"), max_size=12)
names = st.text("abcdefghijklmnopqrstuvwxyz0123456789-./", min_size=1, max_size=12)
int64 = st.integers(-(2**63), 2**63 - 1)
int32s = st.integers(0, 2**31 - 1)
milli = st.integers(0, 2**63 - 1)
labels = st.dictionaries(names, text, max_size=3)
amounts = st.dictionaries(names, st.integers(0, 10**24), max_size=3)  # JSONB holds any size


def _small_tuples(elements: st.SearchStrategy[Any]) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.lists(elements, max_size=3).map(tuple)


taints = st.builds(Taint, names, text, st.sampled_from(["NoSchedule", "NoExecute"]))
tolerations = st.builds(Toleration, names | st.just(""), st.sampled_from(["Equal", "Exists"]), text)
requirements = st.builds(
    SelectorRequirement, names, st.sampled_from(["In", "NotIn", "Exists"]), _small_tuples(text)
)
selectors = st.builds(LabelSelector, labels, _small_tuples(requirements))


@st.composite
def resource_groups(draw: st.DrawFn) -> tuple[ResourceGroup, ...]:
    """Groups whose flavors are distinct across the owner, as Kueue requires."""
    flavors = draw(st.lists(names, unique=True, max_size=5))
    cuts = sorted(draw(st.lists(st.integers(0, len(flavors)), max_size=3)))
    groups = []
    for start, end in zip([0, *cuts], [*cuts, len(flavors)], strict=True):
        covered = draw(st.lists(names, unique=True, min_size=1, max_size=3))
        group_flavors = []
        for flavor in flavors[start:end]:
            resources = draw(st.lists(names, unique=True, min_size=1, max_size=3))
            quotas = [
                ResourceQuota(r, draw(milli), draw(st.none() | milli), draw(st.none() | milli))
                for r in resources
            ]
            group_flavors.append(FlavorQuotas(flavor, tuple(quotas)))
        groups.append(ResourceGroup(tuple(covered), tuple(group_flavors)))
    return tuple(groups)


preemptions = st.builds(
    Preemption,
    st.sampled_from(WithinClusterQueue),
    st.sampled_from(ReclaimWithinCohort),
    st.builds(BorrowWithinCohort, st.sampled_from(BorrowWithinCohortPolicy), st.none() | int64),
)


def _same_identity(obj: Any, like: Any) -> Any:
    fields = {"name": like.name}
    if isinstance(like, LocalQueue):
        fields["namespace"] = like.namespace
    return dataclasses.replace(obj, **fields)


fungibilities = st.builds(
    FlavorFungibility, st.sampled_from(WhenCanBorrow), st.sampled_from(WhenCanPreempt)
)
conditions = st.builds(NodeCondition, names, st.sampled_from(["True", "False"]), text, text)
KINDS = [
    st.builds(
        ResourceFlavor, names, labels, _small_tuples(taints), _small_tuples(tolerations),
        st.none() | names,
    ),
    st.builds(
        ClusterQueue,
        names,
        resource_groups(),
        st.none() | names,
        st.none() | selectors,
        st.sampled_from(QueueingStrategy),
        preemptions,
        fungibilities,
        st.sampled_from(StopPolicy),
        milli,
        _small_tuples(st.builds(CheckRule, names, _small_tuples(names))),
    ),
    st.builds(Cohort, names, st.none() | names, resource_groups(), milli),
    st.builds(LocalQueue, names, names, names, st.sampled_from(StopPolicy)),
    st.builds(PriorityClass, names, int64, text),
    st.builds(Namespace, names, labels),
    st.builds(Topology, names, _small_tuples(names)),
    st.builds(
        Node,
        names,
        labels,
        _small_tuples(taints),
        amounts,
        amounts,
        st.booleans(),
        _small_tuples(conditions),
        st.sampled_from(NodeHealth),
    ),
    st.builds(AdmissionCheck, names, text,
              st.none() | st.builds(ParametersRef, text, text, names)),
    st.builds(ProvisioningRequestConfig, names, names, labels, _small_tuples(names),
              st.builds(RetryStrategy, int32s, int32s, int32s),
              st.none() | st.sampled_from(MERGE_POLICIES)),
]  # fmt: skip
ledger_objects = st.one_of(*KINDS)
# Two objects of one kind, the second taking the first one's identity.
replacements = (
    st.sampled_from(KINDS)
    .flatmap(lambda kind: st.tuples(kind, kind))
    .map(lambda pair: (pair[0], _same_identity(pair[1], pair[0])))
)

zones = st.sampled_from(
    [UTC, timezone(timedelta(hours=5, minutes=30)), timezone(-timedelta(hours=8))]
)
# Hypothesis takes naive bounds and attaches the drawn zone itself.
times = st.datetimes(datetime(1990, 1, 1), datetime(2200, 1, 1), timezones=zones)  # noqa: DTZ001
pod_sets = st.builds(
    PodSet,
    names,
    st.integers(0, 10_000),
    amounts,
    st.none() | st.integers(0, 10_000),
    labels,
    _small_tuples(_small_tuples(requirements)),
    _small_tuples(tolerations),
    labels,
)
placements = st.builds(
    PodSetPlacement,
    names,
    st.dictionaries(names, st.integers(1, 64), max_size=3),
    st.none() | names,
    st.none() | names,
).filter(lambda p: (p.level is None) == (p.domain is None))
admissions = st.builds(
    Admission,
    names,
    _small_tuples(st.builds(PodSetAssignment, names, st.integers(0, 10_000), labels, amounts)),
    st.none() | _small_tuples(placements),
)
workloads = st.builds(
    Workload,
    names,
    names,
    names,
    _small_tuples(pod_sets),
    times,
    int64,
    st.none() | names,
    st.sampled_from(WorkloadState),
    st.booleans(),
    st.none() | admissions,
    st.none() | times,
    st.integers(0, 2**31 - 1),
    labels,
    labels,
    st.sampled_from(["Job", "Workload"]),
)

PROPERTY = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@contextmanager
def undone(session: Session) -> Iterator[None]:
    """Run one example in a savepoint and roll it back, so examples share the database."""
    savepoint = session.begin_nested()
    try:
        yield
    finally:
        savepoint.rollback()


def _key(obj: Any) -> tuple[str, str, str | None]:
    kind = "WorkloadPriorityClass" if isinstance(obj, PriorityClass) else type(obj).__name__
    return kind, obj.name, getattr(obj, "namespace", None)


@PROPERTY
@given(obj=ledger_objects)
def test_upsert_then_get_gives_an_equal_object(ledger: Ledger, session: Session, obj: Any) -> None:
    with undone(session):
        assert ledger.upsert(obj, actor="prop") == "created"
        assert ledger.get(*_key(obj)) == obj
        assert ledger.upsert(obj, actor="prop") == "unchanged"


@PROPERTY
@given(pair=replacements)
def test_replacing_an_object_reads_back_the_replacement(
    ledger: Ledger, session: Session, pair: tuple[Any, Any]
) -> None:
    first, second = pair
    with undone(session):
        ledger.upsert(first, actor="prop")
        outcome = ledger.upsert(second, actor="prop")
        assert outcome == ("unchanged" if first == second else "configured")
        assert ledger.get(*_key(first)) == second
        assert ledger.version(*_key(first)) == (1 if first == second else 2)


@PROPERTY
@given(workload=workloads)
def test_add_workload_then_get_gives_an_equal_workload(
    ledger: Ledger, session: Session, workload: Workload
) -> None:
    with undone(session):
        ledger.add_workload(workload, actor="prop")
        assert ledger.get_workload(workload.namespace, workload.name) == workload
