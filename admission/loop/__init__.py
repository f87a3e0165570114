"""EDGE: the durable admission loop, run by the leader.

In reading order:

- ``loop``: a cycle: refresh, decide (the pure engine), commit once, then actuate.
- ``snapshot_cache``: the loop's in-memory view, refreshed by what changed.
- ``plan``: the engine's result as the cycle's ledger writes and actuations (PURE).
- ``reason_budget``: how many unchanged verdicts a cycle rewrites (PURE).
- ``actuation``: the port to the world (Jobs in Kubernetes, nothing standalone).
- ``leader``: leadership by a lease in the ledger the loop renews itself.
- ``runner``: runs the loop while this replica leads; backs off and steps down.
- ``crash_hook``: kill points for the crash-safety tests.
"""
