"""Hierarchical cohorts (KEP-79): heads borrowing less far up the tree go first, and a
preemptor nearer the quota a borrower uses reclaims it whatever the priority."""

from __future__ import annotations

import pytest
from builders.engine import GPU, T0, admitted, cohort, cq, snapshot, wl

from admission.engine.cycle import run_cycle
from quota.core.model import Preemption, ReclaimWithinCohort, WithinClusterQueue

ANY = Preemption(within_cluster_queue=WithinClusterQueue.LOWER_PRIORITY,
                 reclaim_within_cohort=ReclaimWithinCohort.ANY)
LOWER = Preemption(reclaim_within_cohort=ReclaimWithinCohort.LOWER_PRIORITY)


def tree(near: Preemption = ANY) -> list[object]:
    """Cohort "near" (4 GPUs, below root "r") holds queue "mine"; queue "far" sits under r."""
    return [cohort("r"), cohort("near", "r", {"default": {GPU: 4}}),
            cq("mine", {"default": {GPU: 0}}, cohort="near", preemption=near),
            cq("far", {"default": {GPU: 0}}, cohort="r", preemption=ANY)]


@pytest.mark.parametrize(
    ("objects", "admitted_keys", "evicted"),
    [
        pytest.param([*tree(), wl("near-low", {GPU: 4}, ns="mine", priority=0),
                      wl("far-high", {GPU: 4}, ns="far", priority=9)],
                     ["mine/near-low"], [],
                     id="the head borrowing from its own cohort goes before a higher priority"
                        " borrowing from the root"),
        pytest.param([*tree(), admitted(wl("far-high", {GPU: 4}, ns="far", priority=9), "far"),
                      wl("mine", {GPU: 4}, ns="mine")],
                     ["mine/mine"], [("far/far-high", "InCohortReclamation")],
                     id="a preemptor nearer the quota reclaims it whatever the priority"),
        pytest.param([*tree(LOWER), admitted(wl("far-high", {GPU: 4}, ns="far", priority=9),
                                             "far"),
                      wl("mine", {GPU: 4}, ns="mine")],
                     [], [], id="the advantage still obeys reclaimWithinCohort"),
        pytest.param([*tree(), admitted(wl("far", {GPU: 2}, ns="far"), "far"),
                      admitted(wl("own-low", {GPU: 2}, ns="mine", priority=-1), "mine"),
                      wl("mine", {GPU: 2}, ns="mine", priority=0)],
                     ["mine/mine"], [("far/far", "InCohortReclamation")],
                     id="hierarchical candidates go before the queue's own lower-priority work"),
        pytest.param([cohort("r", quotas={"default": {GPU: 4}}),
                      cohort("near", "r", {"default": {GPU: 0}}),
                      cq("mine", {"default": {GPU: 0}}, cohort="near", preemption=ANY),
                      cq("far", {"default": {GPU: 0}}, cohort="r"),
                      admitted(wl("far", {GPU: 4}, ns="far", priority=9), "far"),
                      wl("mine", {GPU: 4}, ns="mine")],
                     [], [], id="no advantage where only the root's quota holds the request"),
    ],
)
def test_hierarchical_rules(objects: list[object], admitted_keys: list[str],
                            evicted: list[tuple[str, str]]) -> None:
    result = run_cycle(snapshot(*objects), T0)
    assert sorted(d.key for d in result.admitted) == admitted_keys
    assert [(e.key, str(e.cause)) for e in result.evicted] == evicted
