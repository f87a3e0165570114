"""Deciding who runs.

- ``engine``: PURE: snapshot and ``now`` in; admissions, evictions and wait reasons out;
  what a decision or a node fault does to a workload.
- ``simulate``: PURE: scenarios on a virtual clock through the same engine.
- ``intake``: EDGE: submit, finish and checkpoint a workload, observe or move a node, in the
  caller's transaction (REST and the Kubernetes watchers share it).
- ``loop``: EDGE: the durable loop the leader runs: snapshot cache, plan, one transaction,
  then actuation through a port.
- ``kube``: EDGE: the Kubernetes side (kubernetes-asyncio is imported only here).

Dependencies point down: ``kube`` > ``loop`` > ``intake`` | ``simulate`` > ``engine``.
"""
