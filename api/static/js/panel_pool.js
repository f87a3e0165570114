// Pool overview (how much of each class exists, is healthy, in use, idle) and Nodes and
// health (which nodes are degraded or cordoned, since when, and what work it displaced).

import { get } from "./api.js";
import { h, fill, empty } from "./dom.js";
import { amountOf, formatAmount, formatDuration, formatNumber, formatTime, isGpu, unitOf } from "./format.js";

export async function refreshPool() {
  const pool = await get("/api/v1/pool");
  const rows = [];
  for (const flavor of pool.flavors) {
    const resources = flavor.resources.filter((r) => isGpu(r.resource));
    const shown = resources.length ? resources : flavor.resources;
    for (const r of shown) rows.push(poolRow(flavor, r));
  }
  fill(
    "pool-body",
    rows.length
      ? h("table", { class: "grid" },
          h("thead", {}, h("tr", {},
            ["flavor", "resource", "capacity", "unhealthy", "admitted", "free", ""].map((t) => h("th", {}, t)))),
          h("tbody", {}, rows))
      : empty("No ResourceFlavors yet."),
    h("p", { class: "note" },
      "Capacity comes from the Nodes whose labels match a flavor (source: nodes); ",
      "where no Node matches, the sum of nominal quotas stands in (source: quota)."),
  );
}

function poolRow(flavor, r) {
  const cap = amountOf(r.resource, r.capacity);
  const bad = amountOf(r.resource, r.unhealthy);
  const used = amountOf(r.resource, r.admitted);
  const free = amountOf(r.resource, r.free);
  const scale = Math.max(cap, used, 1);
  const pct = (x) => `${(100 * Math.max(0, x)) / scale}%`;
  const bar = h("div", { class: "bar", title: `${formatAmount(r.resource, r.admitted)} admitted of ${formatAmount(r.resource, r.capacity)}` },
    h("span", { class: "seg used", style: { width: pct(used) } }),
    h("span", { class: "seg unhealthy", style: { width: pct(bad) } }),
    h("span", { class: "seg idle", style: { width: pct(free) } }));
  return h("tr", { "data-flavor": flavor.flavor, "data-resource": r.resource },
    h("td", {}, flavor.flavor, h("span", { class: "source" }, ` (${flavor.capacitySource}${flavor.capacitySource === "nodes" ? `: ${flavor.nodes}` : ""})`)),
    h("td", {}, r.resource),
    h("td", { class: "num" }, formatAmount(r.resource, r.capacity)),
    h("td", { class: `num ${bad > 0 ? "warn" : ""}` }, formatAmount(r.resource, r.unhealthy)),
    h("td", { class: "num" }, formatAmount(r.resource, r.admitted)),
    h("td", { class: "num pool-free" }, `${formatNumber(free)} / ${formatNumber(cap)} ${unitOf(r.resource)} free`),
    h("td", { class: "barcell" }, bar));
}

const HEALTH_ANNOTATION = "berth.dev/health";

export async function refreshNodes() {
  const [listed, states] = await Promise.all([get("/api/v1/nodes"), get("/api/v1/node-health")]);
  const nodes = listed.items || [];
  if (!nodes.length) {
    fill("nodes-body", empty("No Nodes in the ledger (standalone pools may have none)."));
    return;
  }
  health = new Map((states.items || []).map((s) => [s.node, s]));
  nodes.sort((a, b) => rank(b) - rank(a) || a.metadata.name.localeCompare(b.metadata.name));
  fill("nodes-body", h("table", { class: "grid" },
    h("thead", {}, h("tr", {}, ["node", "health", "since", "accelerators (allocatable / capacity)", "evictions caused", "notes"].map((t) => h("th", {}, t)))),
    h("tbody", {}, nodes.map(nodeRow))));
}

// Node name -> {health, healthSince, displaced} from /api/v1/node-health.
let health = new Map();

function healthOf(node) {
  const state = health.get(node.metadata.name);
  return (state && state.health) || ((node.metadata.annotations || {})[HEALTH_ANNOTATION]) || "Healthy";
}

function sinceCell(node) {
  const state = health.get(node.metadata.name);
  if (!state || !state.healthSince) return h("td", {}, "—");
  const seconds = (Date.now() - new Date(state.healthSince).getTime()) / 1000;
  return h("td", { class: "since", title: formatTime(state.healthSince) }, `${formatDuration(seconds)} ago`);
}

function displacedCell(node) {
  const state = health.get(node.metadata.name);
  const count = state ? state.displaced : 0;
  return h("td", { class: `displaced${count ? " warn" : ""}`, title: `GET /api/v1/nodes/${node.metadata.name}/history lists them` },
    count ? `${count} workload${count === 1 ? "" : "s"}` : "—");
}

function rank(node) {
  const bad = healthOf(node) !== "Healthy" || (node.spec || {}).unschedulable;
  return bad ? 1 : 0;
}

function nodeRow(node) {
  const status = node.status || {};
  const capacity = status.capacity || {};
  const allocatable = status.allocatable || capacity;
  const state = healthOf(node);
  const devices = Object.keys(capacity).filter(isGpu).map((resource) => {
    const cap = amountOf(resource, capacity[resource]);
    const alloc = amountOf(resource, allocatable[resource]);
    const lost = cap - alloc;
    return h("div", { class: lost > 0 ? "warn" : "" },
      `${formatNumber(alloc)} / ${formatNumber(cap)} ${unitOf(resource)}`,
      lost > 0 ? ` (${formatNumber(lost)} unhealthy)` : "");
  });
  const notes = [];
  if ((node.spec || {}).unschedulable) notes.push("cordoned (unschedulable)");
  for (const c of status.conditions || []) {
    if ((c.type === "Ready" && c.status !== "True") || (c.type !== "Ready" && c.status === "True")) {
      notes.push(`${c.type}=${c.status}${c.reason ? ` (${c.reason})` : ""}`);
    }
  }
  return h("tr", { "data-node": node.metadata.name },
    h("td", {}, node.metadata.name),
    h("td", {}, h("span", { class: `health ${state === "Healthy" ? "ok" : "bad"}` }, state)),
    sinceCell(node),
    h("td", {}, devices.length ? devices : "—"),
    displacedCell(node),
    h("td", {}, notes.join("; ") || "—"));
}
