"""PURE, standard library only: the values everything else is built on.

In reading order:

- ``errors``: one root error; each carries an HTTP status and names object and field.
- ``quantity``: Kubernetes quantities as exact integers in milli-units; ``times``: RFC 3339
  date-times as the REST API takes them.
- ``model``: the ledger's objects as frozen values (flavors, queues, cohorts, nodes, ...).
- ``checks``: admission checks, their controllers' configuration, per-workload check states.
- ``kinds``: the object kinds and the names users may call them by.
- ``workload``: workloads as frozen values: pod sets, admission, states and state sets,
  and the pending order.
- ``reasons``: the wait-reason and eviction-reason vocabulary.
- ``tree``: the cohort tree's quota arithmetic (nominal, lendable, available, borrowed);
  ``tree_trial``: the same arithmetic as if some usage were taken out, tree untouched.
- ``node_health``: the node health state machine: what a watched Node says, what an
  operator may do, which nodes take work.
- ``checkpoints``: checkpoint annotations, grace and last save.
- ``pods_ready``: all-or-nothing start: Kueue's ``waitForPodsReady`` policy, the
  readiness of an admitted workload's pods, timeouts and the requeue backoff.
- ``metering``, ``borrowing``: why usage ended, prices and cost; who owes whom.
- ``demand``: what waiting work asks of the cluster: capacity demand, quota-blocked demand.
- ``fairness``: fair-sharing configuration (Kueue's strategies, admission fair sharing,
  Berth's memory) and the decayed usage it reads.
- ``cycle_writes``: what one admission cycle writes, as plain values.
- ``timeline``: a workload's history as people read it: merged, ordered, totalled, with
  each eviction's preemptor.
"""
