"""Berth: job queueing and quota admission controller for shared GPU clusters.

The shell: it may import anything.

- ``settings``: the ONLY reader of ``BERTH_*`` variables: one typed tree;
  ``settings_parsers``: its leaf parsers (text or YAML to typed values).
- ``embedded``, ``embedded_files``, ``database``, ``migrate``: where the ledger lives (the
  embedded server and the folders it needs), and its migrations.
- ``serve``, ``readiness``: ``berth serve`` (API, webhook, the loop on the leader) and what
  ``/readyz`` checks; ``https``: its HTTPS listener (webhook, aggregated API), with the
  client certificate handed to the app.
- ``cli``: one module per ``berth`` command; ``__main__``: ``python -m berth``.
- ``demo``: ``berth serve --demo``; ``bench``: ``berth bench``.
"""
