"""PURE: ``berth simulate``: a scenario through the admission engine on a virtual clock.

In reading order:

- ``scenario``: a scenario file parsed and checked into typed steps.
- ``config``: the scenario's ``config``: Kueue's ``waitForPodsReady`` fields.
- ``run``: the steps through the engine until each reaches its fixed point, each cycle
  as the durable loop's (node faults, then the engine, through the same transitions).
- ``output``: the result as docs/scenario.md's JSON, or as tables.
- ``limits``: what one ``POST /api/v1/simulate`` may cost.
"""
