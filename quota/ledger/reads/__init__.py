"""EDGE, read-only: what the REST API, the dashboard, metrics and status writers read.

In reading order:

- ``workloads``: one workload with its verdict, who is ahead, filtered pages.
- ``pending``: a queue's pending workloads in order, placed in ClusterQueue and LocalQueue.
- ``history``: a workload's reason timeline and events.
- ``queues``, ``queue_cache``, ``status``: ClusterQueue and cohort status.
- ``usage``, ``borrowing``: metering over a window; who owes whom.
- ``fair_usage``: decayed usage per ClusterQueue and LocalQueue, which the loop passes to
  fair sharing.
- ``metrics``: aggregates for Prometheus; ``demand``: the autoscaler's signal.
- ``dashboard``: the pool and trend panels.
- ``activity``: the node map, preemptions over time, pending ages (shared SQL with
  ``metrics``).
- ``audit``: the audit log, newest first, a page at a time.
"""
