"""``berth bench``: Kueue's scheduler-performance shapes through the durable loop, beside the
ideal (the pure engine with zero decision latency) and, for ``drain``, a bare psycopg floor.

In reading order: ``arguments`` (the CLI's, importing nothing heavy), ``shapes`` (the
shapes, PURE), ``ledger`` (a fresh database per run), ``processes`` (the run's child
processes: start, end, failure), ``driver`` (the arrival driver's process), ``runner``
(the simulated cluster's process), ``realtime`` (a shape through the loop), ``ideal``
(the same on a virtual clock, PURE), ``figures`` and ``report`` (PURE), ``progress``,
``command`` (each shape end to end), ``drain`` and ``floor`` (the backlog drain and its
psycopg floor), ``engine`` (one engine cycle at scale), ``steady`` (the cycle after
arrivals and finishes on its steady state), ``api_load`` (the read API under load).
"""
