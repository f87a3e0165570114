"""Pydantic response models of the read API (the OpenAPI document is built from them):
``base`` (camelCase on the wire), ``workloads``, ``status``, ``audit``."""
