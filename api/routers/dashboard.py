"""``GET /``: the admin dashboard, and ``GET /static/...``: the assets it is made of.

The page is plain HTML, CSS and JavaScript shipped inside the package, so it works without
a front-end build and without any external network; all its data comes from the REST API.
"""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter
from fastapi.responses import FileResponse

from api.routers import activity, dashboard_data
from quota.core.errors import NotFound

STATIC = Path(__file__).resolve().parent.parent / "static"
_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
# The page polls the API itself; assets may be cached briefly, the HTML never (a new Berth
# version must not run with an old page).
_NO_STORE = {"Cache-Control": "no-store"}

router = APIRouter(tags=["dashboard"])
# The page's pool-wide aggregates and activity reads come with it (they are ordinary,
# documented API paths).
router.include_router(dashboard_data.router)
router.include_router(activity.router)


@router.get(
    "/",
    response_class=FileResponse,
    summary="The admin dashboard (HTML)",
    responses={200: {"content": {"text/html": {"schema": {"type": "string"}}}}},
)
def dashboard() -> FileResponse:
    """The admin dashboard page."""
    return FileResponse(STATIC / "index.html", media_type=_TYPES[".html"], headers=_NO_STORE)


@router.get("/static/{path:path}", response_class=FileResponse, include_in_schema=False)
def asset(path: str) -> FileResponse:
    """One file of the dashboard."""
    target = asset_path(STATIC, path)
    if target is None:
        raise NotFound(f"dashboard asset {path!r} not found", field="path")
    return FileResponse(
        target, media_type=_TYPES[target.suffix], headers={"Cache-Control": "max-age=60"}
    )


def asset_path(root: Path, path: str) -> Path | None:
    """The file ``path`` names inside ``root``, if it is one of the served types; never a
    file outside ``root`` (``..`` segments and symlinks are resolved first)."""
    target = (root / path).resolve()
    if target.suffix not in _TYPES or not target.is_relative_to(root.resolve()):
        return None
    return target if target.is_file() else None
