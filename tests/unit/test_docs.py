"""The user documentation in docs/ says what the code does.

Each page is compared with the one place its facts live: the wait-reason enums
(``quota.core.reasons``), the app's OpenAPI document, and the keys the scenario parser
takes. A reason code, a route or a scenario key added without its line in docs/ fails
here, as does a line for one that no longer exists, and a relative link (in README.md or
docs/) to a file or heading that is not there.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from builders.paths import REPO
from builders.reads import berth_context
from starlette.routing import Route

from admission.kube.access_review import Decision, ResourceAttributes
from admission.kube.front_proxy import FrontProxy, Identity
from admission.simulate.output import to_dict
from admission.simulate.run import simulate
from admission.simulate.scenario import _DELETE_KEYS, _STEP_KEYS, _TOP_KEYS, parse_scenario
from api import mcp
from api.aggregated import Aggregation
from api.app import create_app, create_webhook_app
from quota.core.reasons import EvictionReason, PreemptionCause, WaitReason
from quota.manifests.configuration import KEYS as CONFIG_KEYS

DOCS = REPO / "docs"
PAGES = sorted(DOCS.glob("*.md"))
_ROW = re.compile(r"^\|(.+)\|\s*$")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def _section(page: str, heading: str) -> str:
    """The text under ``heading`` (a ``#`` line, any level) up to the next heading."""
    lines = (DOCS / page).read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if re.fullmatch(
        rf"#+ {re.escape(heading)}", line)), None)  # fmt: skip
    assert start is not None, f"docs/{page} has no heading {heading!r}"
    body = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        body.append(line)
    return "\n".join(body)


def _rows(text: str) -> list[list[str]]:
    """The cells of a Markdown table's body rows (header and rule dropped)."""
    rows = [[c.strip() for c in m[1].split("|")] for m in map(_ROW.match, text.splitlines())
            if m]  # fmt: skip
    return [r for r in rows[2:] if r]


def _code(cell: str) -> str:
    found = re.fullmatch(r"`([^`]+)`", cell)
    assert found, f"expected one `code` in the cell, got {cell!r}"
    return found[1]


# --- wait reasons ----------------------------------------------------------------------------


def test_every_wait_reason_is_catalogued_with_its_precedence_and_nothing_else_is() -> None:
    rows = _rows(_section("wait-reasons.md", "The catalogue, in precedence order"))
    documented = {(int(row[0]), _code(row[1])) for row in rows}
    assert len(documented) == len(rows), "a code or precedence is listed twice"
    assert documented == {(r.precedence, str(r)) for r in WaitReason}


def test_every_eviction_reason_is_catalogued_and_nothing_else_is() -> None:
    rows = _rows(_section("wait-reasons.md", "Eviction reasons"))
    assert {_code(row[0]) for row in rows} == {str(r) for r in EvictionReason}


def test_every_preemption_cause_is_explained() -> None:
    text = _section("wait-reasons.md", "Eviction reasons")
    explained = set(re.findall(r"^- `(\w+)`:", text, re.MULTILINE))
    assert explained == {str(cause) for cause in PreemptionCause}


# --- REST ------------------------------------------------------------------------------------


def _operations() -> set[str]:
    engine: Any = None  # the document is built without touching the ledger
    doc = create_app(berth_context(engine)).openapi()
    return {f"{method.upper()} {path}" for path, methods in doc["paths"].items()
            for method in methods}  # fmt: skip


def test_every_route_of_the_openapi_document_is_documented_and_nothing_else_is() -> None:
    rows = _rows(_section("rest.md", "Routes"))
    documented = [_code(row[0]) for row in rows]
    assert len(set(documented)) == len(documented), "a route is listed twice"
    operations = _operations()
    assert not operations - set(documented), "routes without a line in docs/rest.md"
    assert not set(documented) - operations, "docs/rest.md lists routes the app lacks"


def test_every_route_of_the_https_listener_is_documented_and_nothing_else_is() -> None:
    engine: Any = None
    aggregation = Aggregation(FrontProxy("-----BEGIN CERTIFICATE-----"), _never)
    app = create_webhook_app(berth_context(engine), aggregation)
    served = {f"{method.upper()} {path}" for path, methods in app.openapi()["paths"].items()
              for method in methods}  # fmt: skip
    documented = [_code(row[0]) for row in _rows(_section("rest.md", "The HTTPS listener"))]
    assert sorted(documented) == sorted(served)


async def _never(identity: Identity, attributes: ResourceAttributes) -> Decision:
    raise AssertionError("no request is made")


def test_the_mcp_route_and_every_tool_are_documented_and_nothing_else_is() -> None:
    engine: Any = None  # listing the tools touches no ledger
    app = create_app(berth_context(engine))
    routes, tools = (_rows(table) for table in _section("rest.md", "The MCP server").split("\n\n")
                     if table.startswith("|"))  # fmt: skip
    served = {f"POST {r.path}" for r in app.routes
              if isinstance(r, Route) and r.path == mcp.PATH and "POST" in (r.methods or ())}
    assert {_code(row[0]) for row in routes} == served == {f"POST {mcp.PATH}"}
    listed = asyncio.run(app.state.berth_mcp.list_tools())
    assert [_code(row[0]) for row in tools] == [tool.name for tool in listed]


# --- scenarios -------------------------------------------------------------------------------


def _documented_keys(heading: str) -> list[str]:
    return [_code(row[0]) for row in _rows(_section("scenario.md", heading))]


@pytest.mark.parametrize(("heading", "accepted"), [
    pytest.param("Top-level keys", _TOP_KEYS, id="top-level keys"),
    pytest.param("Step keys", _STEP_KEYS, id="step keys"),
])  # fmt: skip
def test_every_scenario_key_the_parser_takes_is_documented_and_nothing_else_is(
    heading: str, accepted: tuple[str, ...]
) -> None:
    assert sorted(_documented_keys(heading)) == sorted(accepted)


def test_every_config_key_the_parser_takes_is_documented_and_nothing_else_is() -> None:
    accepted = [f"{section}.{key}" for section, keys in CONFIG_KEYS.items() for key in keys]
    assert sorted(_documented_keys("The config block")) == sorted(accepted)


def test_the_delete_event_documents_its_fields() -> None:
    row = next(r for r in _rows(_section("scenario.md", "Step keys")) if r[0] == "`delete`")
    assert f"{{{', '.join(_DELETE_KEYS)}}}" in row[1]




def test_the_scenario_example_runs_as_its_output_example_says() -> None:
    text = (DOCS / "scenario.md").read_text()
    example = re.search(r"## A short example\n\n```yaml\n(.*?)```", text, re.DOTALL)
    output = re.search(r"## Output\n.*?```json\n(.*?)```", text, re.DOTALL)
    assert example is not None and output is not None
    shown = json.loads(output[1])
    ran: dict[str, Any] = to_dict(simulate(parse_scenario(example[1], "docs/scenario.md")))
    assert ran["name"] == shown["name"]
    step = next(s for s in ran["steps"] if s["at"] == shown["steps"][0]["at"])
    for key, workload in shown["steps"][0]["workloads"].items():
        actual = step["workloads"][key]
        assert actual["state"] == workload["state"], key
        if "reason" in workload:
            assert actual["reason"]["code"] == workload["reason"]["code"], key
        else:
            assert actual["podSets"] == workload["podSets"], key
    assert step["preempted"] == shown["steps"][0]["preempted"]
    for name, queue in shown["steps"][0]["clusterQueues"].items():
        assert step["clusterQueues"][name] == queue, name


# --- links -----------------------------------------------------------------------------------


def _anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    found: set[str] = set()
    for line in page.read_text().splitlines():
        heading = re.match(r"#+ (.+)", line)
        if heading is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading[1].lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in found:
            n += 1
            anchor = f"{slug}-{n}"
        found.add(anchor)
    return found


def _without_code(text: str) -> str:
    text = re.sub(r"```.*?```", "", text, flags=re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


@pytest.mark.parametrize("page", [REPO / "README.md", *PAGES],
                         ids=lambda p: str(p.relative_to(REPO)))  # fmt: skip
def test_every_relative_link_resolves_inside_the_repository(page: Path) -> None:
    broken = []
    for target in _LINK.findall(_without_code(page.read_text())):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:: not ours to check offline
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.is_relative_to(REPO) or not resolved.exists():
            broken.append(f"{target}: no such file in the repository")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading #{anchor} in {resolved.name}")
    assert not broken, f"{page.name}: {broken}"


@pytest.mark.parametrize("page", [REPO / "README.md", *PAGES],
                         ids=lambda p: str(p.relative_to(REPO)))  # fmt: skip
def test_no_page_sends_readers_outside_the_repository(page: Path) -> None:
    # The design notes under ../shared/spec are not shipped; docs/ says what Berth does.
    assert "../shared/" not in page.read_text()


def test_the_docs_index_links_every_page() -> None:
    index = (DOCS / "README.md").read_text()
    linked = {target.partition("#")[0] for target in _LINK.findall(index)}
    assert {p.name for p in PAGES} - {"README.md"} <= linked
