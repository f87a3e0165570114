"""PURE: the admission engine: a snapshot and ``now`` in; admissions, evictions, wait
reasons out. No I/O and no clock: time is an argument.

In reading order:

- ``types``: what goes into one cycle (``Snapshot``) and what comes out (``CycleResult``).
- ``workload``: who holds quota, how much, validity, grace.
- ``checks``: what blocks a workload before any quota is measured.
- ``check_states``: admission checks: reserve quota, admit when every check is Ready,
  requeue on Retry (with backoff), deactivate on Rejected.
- ``queues``: pending queues in order, each workload's least request, the quota caps.
- ``flavors``: flavor assignment per pod set; partial admission's pod set reducer.
- ``fungible``: which flavor a workload short of quota takes where victims decide it.
- ``node_room``, ``capacity``, ``topology``, ``node_limits``: one node's room; which
  nodes a flavor has, where pods go; topology domains; the pods no node can ever hold.
- ``candidates``, ``preemption``, ``victim_sets``: victim candidates, the search for victims,
  the smallest victim set and the proof that none exists.
- ``hierarchy``: victims in a cohort tree, by hierarchical advantage (KEP-79).
- ``reservations``: quota a workload needing preemption keeps when it found no victims.
- ``fairshare``: a ClusterQueue's dominant-resource share.
- ``verdict``, ``reasons``, ``statuses``: how well a workload fits, its wait reasons as
  data, each waiting workload's verdict and position.
- ``cycle_memo``, ``quick_filter``, ``cycle_reasons``, ``cycle_victims``: what one cycle
  remembers by shape and pool state; the workloads it parks unevaluated once a queue runs
  short; the reasons it writes for those left waiting; its victim searches.
- ``cycle_holders``: the cycle's first step: drain stopped queues and deactivations, settle
  reservations whose admission checks answered.
- ``cohort_order``: the order of queue heads across a cohort tree.
- ``cycle``: one admission cycle, written as named steps.
- ``node_faults``: which admitted workloads a node fault evicts.
- ``pods_ready``: which admitted workloads waitForPodsReady evicts (or deactivates), and
  the admitted one blockAdmission waits for.
- ``transitions``: what an admission, an eviction, a checkpoint or a grace expiry does to
  a workload; the loop's plan and the simulator both move workloads through it.
- ``stored_form``: a verdict as the ledger stores it.
- ``shapes``, ``collector``: caches kept across cycles; the garbage collector held off.
"""
