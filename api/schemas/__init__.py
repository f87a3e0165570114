"""Pydantic models of the API (the OpenAPI document is built from them): ``base``
(camelCase on the wire), ``errors`` (the error answer and the helper routes declare their
statuses with), ``workloads``, ``status``, ``audit`` (the audit log), ``leader`` (who runs
the loop), ``visibility`` (Kueue's PendingWorkloadsSummary and Status), ``manifests`` (the
apply and submit bodies) and ``scenario`` (the simulate body)."""
