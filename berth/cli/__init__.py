"""The ``berth`` command line: one module per command.

- ``main``: the argument parser and the dispatch.
- ``objects``: ``apply``, ``get``, ``delete``; ``why``: ``why``, ``get workloads``, ``top``;
  ``node``: the repair workflow; ``audit``: who changed what; ``simulate``; ``db``:
  migrations.
- ``client``: the REST client; ``tables``: plain-text tables; ``history``: the history
  lines of ``why``.
"""
