"""Test builders, one importable package (``pytest``'s pythonpath is ``tests/``).

In reading order:

- ``paths``: where the repository's folders are, for tests that read examples and deploy/.
- ``strategies``: hypothesis strategies for the core's values.
- ``manifests``: workload manifests as users write them (``job``: every test's Job).
- ``engine``, ``capacity``: snapshots, queues and nodes for the pure engine's tests.
- ``simulate``: scenarios for ``berth simulate``.
- ``ledger``: rows and objects in a real ledger.
- ``loop``: a ledger with the durable loop over it, and a recording actuator.
- ``invariants``: what a sound ledger never breaks (quota, usage intervals, events).
- ``reads``: a ledger on a settable clock for the read API, and a served app.
- ``histories``: a workload reclaimed again and again, by preemptors of two tenants.
- ``browser``: headless Chromium (Debian's, through Playwright) for the browser tests.
- ``inputs``: manifests and bodies for the input-limit tests.
- ``served``: Berth's app under a real uvicorn on a loopback port.
- ``certs``: CAs and certificates made in the test (HTTPS listener, front-proxy clients).
- ``serve_process``: a real ``berth serve`` process, its log kept on disk; ``load``: steady
  submissions to it from a thread, through an outage.
- ``clone``: an offline clone of the repository with its own ``.venv`` (the README's set-up).
- ``health_probe``: ``/healthz`` asked every few milliseconds from a process of its own.
- ``tcp_proxy``: a freezable TCP proxy in front of PostgreSQL (a silent partition).
- ``fakeapi``: a fake Kubernetes API server that speaks the wire protocol (tokens, RBAC,
  SubjectAccessReview, APIService aggregation behind a front-proxy certificate).
- ``crds``, ``waiting``: Berth's CRD files; waits on the fake API server's state.
"""
