"""EDGE: what comes in, in the caller's transaction (REST routes and the watchers).

- ``workloads``: submit a Job or Workload with its first verdict, finish one.
- ``nodes``: a watched Node or an operator's move through the health state machine.
"""
