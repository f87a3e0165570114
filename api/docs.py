"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) from assets packaged with Berth, so the
API reference works on a cluster without internet access: FastAPI's own pages load their
scripts and stylesheets from public CDNs (and ReDoc its fonts from Google), and render
blank offline. The assets (Swagger UI's bundle and stylesheet, ReDoc's standalone
script, MIT-licensed) come from the ``fastapi-offline`` package, a declared dependency;
only its files are used, served under ``ASSETS``.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

ASSETS = "/docs-assets"
ASSET_DIR = Path(fastapi_offline.__file__).parent / "static"


def install(app: FastAPI) -> None:
    """Serve the two reference pages and their assets; ``app`` was built with
    ``docs_url=None, redoc_url=None`` so FastAPI's CDN pages are not there too."""
    openapi_url = app.openapi_url or "/openapi.json"
    title = app.title
    app.mount(ASSETS, StaticFiles(directory=ASSET_DIR), name="docs-assets")
    oauth_redirect = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    @app.get("/docs", include_in_schema=False)
    def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url, title=f"{title} - Swagger UI",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
            oauth2_redirect_url=oauth_redirect,
        )  # fmt: skip

    @app.get(oauth_redirect, include_in_schema=False)
    def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url, title=f"{title} - ReDoc",
            redoc_js_url=f"{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS}/favicon.png", with_google_fonts=False,
        )  # fmt: skip
