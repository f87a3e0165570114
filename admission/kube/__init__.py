"""Berth in a Kubernetes cluster: watch Jobs, CRDs and Nodes, suspend and unsuspend Jobs.

Only ``client`` and ``runtime`` import kubernetes_asyncio; the rest works on plain dicts.
"""
