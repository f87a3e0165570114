"""The ``berth`` command line: one module per command.

- ``main``: the argument parser and the dispatch.
- ``objects``: ``apply``, ``delete``; ``get``: every kind and workloads; ``workloads``:
  ``submit``, ``finish``; ``why``: ``why``, ``history``, ``top``; ``node``: the repair workflow;
  ``audit``: who changed what; ``check``: answer an external admission check;
  ``simulate``; ``db``: migrations; ``mcp``: the read-only MCP tools over stdio;
  ``kubectl``: ``kubectl berth``, the read commands (``get``, ``why``, ``top``,
  ``history``) through the API server's service proxy.
- ``client``: the REST client (every command above but ``simulate``, ``db`` and ``mcp``
  goes to the one server it names); ``manifests``: reading ``-f`` files; ``kinds``: kind
  names; ``tables``: plain-text tables; ``history``: the history lines of ``why``.
"""
