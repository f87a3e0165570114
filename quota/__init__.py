"""What exists and who may use how much.

- ``core``: PURE, standard library only: the values (quantities, objects, workloads, wait
  reasons, node health, checkpoints, metering) and the cohort tree's arithmetic.
- ``manifests``: PURE, text in: Kueue and Job YAML/JSON to core values and back, every
  problem collected before anything is written.
- ``ledger``: EDGE: SQLAlchemy and psycopg, the only code that writes SQL; ``reads`` is the
  read side the REST API, metrics and status writers use.

Dependencies point down: ``ledger`` > ``manifests`` > ``core``.
"""
