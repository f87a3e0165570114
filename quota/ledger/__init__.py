"""EDGE: the ledger in PostgreSQL; the only code that writes SQL. Every function runs in
a session the caller owns (one transaction per request, one per admission cycle).

In reading order:

- ``connect``: how every connection is opened (timeouts) and a transaction scoped.
- ``errors``: driver errors translated into ``quota.core.errors`` at this edge.
- ``schema``: the tables; ``codec``: the JSON shapes of nested values.
- ``bulk``: rows appended by COPY, JSON as one text; ``audit``: the audit log's one writer.
- ``objects``: how each object kind maps to its row; ``repository``: ``Ledger``, the
  object and workload repository; ``apply``: validated manifests into the ledger.
- ``workloads``: workload rows, the current row of a name, conditional changes.
- ``lifecycle``, ``checkpoints``, ``readiness``, ``check_states``, ``nodes``: writes outside
  the loop (submit, finish, checkpoint reports, pods becoming Ready, admission check states,
  node health).
- ``changes``, ``decisions``, ``notify``: what the admission loop reads, writes and waits on.
- ``reads``: the read side for REST, metrics and status.
"""
