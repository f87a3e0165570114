"""The OpenAPI document (``/openapi.json``), Berth's REST contract: what FastAPI builds from
the routes, plus the schemas of the bodies the routes read themselves (manifests and
scenarios, ``api.schemas``), and the bearer-token scheme only where tokens are configured:
without any, every request is allowed (loopback only), and the document says so by
declaring no security at all.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI

from api.schemas import manifests, scenario

BODY_SCHEMAS = {**manifests.COMPONENTS, **scenario.COMPONENTS}


def install(app: FastAPI, *, secured: bool) -> None:
    """Serve the contract as described above; ``secured``: the server checks tokens."""
    build = app.openapi

    def document() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        contract = build()  # cached by FastAPI as app.openapi_schema: completed here, once
        components = contract.setdefault("components", {})
        schemas = components.setdefault("schemas", {})
        clash = sorted(set(schemas) & set(BODY_SCHEMAS))
        if clash:
            raise RuntimeError(f"OpenAPI component names used twice: {', '.join(clash)}")
        schemas.update(BODY_SCHEMAS)
        if not secured:
            components.pop("securitySchemes", None)
            for operations in contract.get("paths", {}).values():
                for operation in operations.values():
                    operation.pop("security", None)
        return contract

    app.openapi = document  # type: ignore[method-assign]
