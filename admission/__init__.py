"""Deciding who runs: the pure engine, the durable loop, Kubernetes actuation."""
