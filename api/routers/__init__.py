"""One router per resource; routers hold no SQL (the ledger does) and shape responses.

- ``health``: ``/healthz``, ``/readyz``; ``leader``: who runs the admission loop, or why not.
- ``workloads``, ``workload_actions``: workload reads; submit, finish, checkpoint reports.
- ``admission_checks``: an external admission check's controller sets its state.
- ``demand``: the autoscaler's signal: capacity demand apart from quota-blocked demand.
- ``status``, ``objects``: ClusterQueue and cohort status, usage, borrowing; every kind.
- ``apply``, ``deletes``, ``simulate``, ``nodes``: apply manifests (or dry-run them);
  delete objects; what-if runs; node repair.
- ``audit``: who changed what and when (admin tokens only).
- ``dashboard``, ``dashboard_data``, ``activity``: the admin page; its pool and trend
  data; the node map, preemptions over time and pending ages.
- ``webhook``: the mutating webhook (served only on its HTTPS listener).
- ``visibility``: Kueue's visibility API (pending workloads of a ClusterQueue or LocalQueue).
"""
