"""``/docs`` and ``/redoc`` work without internet: every script and stylesheet they name is
served by Berth itself, and in a browser cut off from every other host the operations of
the REST contract render (only ReDoc's own vendor logo is an image from outside)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx
import pytest
from builders.browser import chromium
from builders.reads import serve

pytestmark = pytest.mark.db

# What a page loads: <script src=...>, <link href=...> (stylesheets, the favicon).
ASSET = re.compile(r"""<(?:script[^>]*\bsrc|link[^>]*\bhref)\s*=\s*["']([^"']+)["']""")


@pytest.fixture
def api(db_url: str) -> Iterator[httpx.Client]:
    with serve(db_url) as client:
        yield client


@pytest.mark.parametrize(
    ("page", "expected"),
    [
        pytest.param("/docs", {"swagger-ui-bundle.js", "swagger-ui.css"}, id="Swagger UI"),
        pytest.param("/redoc", {"redoc.standalone.js"}, id="ReDoc"),
    ],
)
def test_reference_pages_load_only_what_berth_serves(
    api: httpx.Client, page: str, expected: set[str]
) -> None:
    response = api.get(page)
    assert response.status_code == 200
    urls = [urljoin(str(response.url), u) for u in ASSET.findall(response.text)]
    assert expected <= {urlsplit(u).path.rsplit("/", 1)[-1] for u in urls}
    base = urlsplit(str(api.base_url)).netloc
    assert [u for u in urls if urlsplit(u).netloc != base] == []
    assert {u: api.get(u).status_code for u in urls} == dict.fromkeys(urls, 200)
    assert "/openapi.json" in response.text


@pytest.fixture
def browser() -> Iterator[Any]:
    with chromium() as launched:
        yield launched


@pytest.mark.parametrize(
    ("page", "operation"),
    [
        pytest.param("/docs", ".opblock-summary-path", id="Swagger UI lists the operations"),
        pytest.param("/redoc", "[data-section-id^='tag/']", id="ReDoc lists the sections"),
    ],
)
def test_reference_pages_render_offline(
    api: httpx.Client, browser: Any, page: str, operation: str
) -> None:
    base = str(api.base_url).rstrip("/")
    outside: list[str] = []

    def offline(route: Any) -> None:
        if route.request.url.startswith(base + "/"):
            route.continue_()
        else:
            outside.append(f"{route.request.resource_type} {route.request.url}")
            route.abort()

    tab = browser.new_page()
    tab.route("**/*", offline)
    tab.goto(base + page)
    tab.wait_for_selector(operation, timeout=20_000)
    texts = tab.locator(operation).all_inner_texts()
    # ReDoc's menu shows its vendor's logo from their CDN: an image the page renders without.
    assert [u for u in outside if u != "image https://cdn.redoc.ly/redoc/logo-mini.svg"] == []
    if page == "/docs":
        assert "/api/v1/workloads" in [t.replace("\u200b", "").strip() for t in texts]
    else:
        assert len(texts) > 3
