"""HTTP: the REST API and the admin dashboard. Routers shape responses; no SQL text here.

- ``app``: the application and the rules its routes must keep; ``deps``: what routes get
  (a transaction per request, the readiness check).
- ``auth``, ``tenancy``: tokens, and what a tenant may see of other namespaces.
- ``guards``, ``body_limit``, ``errors``, ``params``: bad input refused before any work,
  errors in one shape, the path and query parameter types.
- ``openapi``: the OpenAPI document, the REST contract; ``docs``: ``/docs`` and ``/redoc``
  from packaged assets (offline).
- ``pagination``, ``responses``, ``estimate``: cursors, fast response serialisation, start
  estimates.
- ``metrics``: ``/metrics``; ``metrics_kueue``: Kueue's metric names beside Berth's.
- ``mcp``: the read-only MCP server at ``/mcp`` (and ``berth mcp``): the read routes as tools.
- ``aggregated``: Kueue's visibility API for the Kubernetes aggregation layer, on the HTTPS
  listener: front-proxy identity, delegated authorization, discovery.
- ``routers``: one per resource; ``schemas``: response models; ``static``: the dashboard.
"""
