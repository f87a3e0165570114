"""Path and query parameter types shared by the routers, each declaring in the OpenAPI
document exactly what the server takes.

Names in paths are declared with the patterns objects are created with (DNS-1123, as
``quota.manifest_reader`` checks them); a path with any other name names nothing and is
answered 404 like any unknown name. Times are RFC 3339 ``date-time`` strings, parsed by
``quota.times`` (pydantic alone would also take ``0.5`` as a Unix timestamp).
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import Path, Query
from pydantic import BeforeValidator, WithJsonSchema

from quota.core.times import EXAMPLE, parse_rfc3339
from quota.manifests.reader import LABEL_PATTERN, SUBDOMAIN_PATTERN


def _name(what: str, pattern: str, longest: int) -> Any:
    return Path(
        description=f"{what}; nothing else exists (404)",
        json_schema_extra={"pattern": pattern, "maxLength": longest},
    )


ObjectName = Annotated[str, _name("a DNS-1123 subdomain", SUBDOMAIN_PATTERN, 253)]
NamespaceName = Annotated[str, _name("a namespace: a DNS-1123 label", LABEL_PATTERN, 63)]


def _strict_time(value: object) -> datetime:
    if not isinstance(value, str):
        raise ValueError(f"must be an RFC 3339 date-time string (e.g. {EXAMPLE})")
    return parse_rfc3339(value)


Rfc3339 = Annotated[
    datetime,
    BeforeValidator(_strict_time),
    WithJsonSchema({"type": "string", "format": "date-time", "examples": [EXAMPLE]}),
]

DryRun = Annotated[
    Literal["All"] | None,
    Query(
        alias="dryRun",
        description="All: check and compare everything, write nothing (as Kubernetes' dryRun)",
    ),
]
