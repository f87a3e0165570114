"""Pydantic response models of the read API (the OpenAPI document is built from them)."""
