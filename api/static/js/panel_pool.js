// Pool overview (how much of each class exists, is healthy, in use, idle) and Nodes and
// health (which nodes are degraded or cordoned).

import { get } from "./api.js";
import { h, fill, empty } from "./dom.js";
import { amountOf, formatAmount, formatNumber, isGpu, unitOf } from "./format.js";

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
  const nodes = (await get("/api/v1/nodes")).items || [];
  if (!nodes.length) {
    fill("nodes-body", empty("No Nodes in the ledger (standalone pools may have none)."));
    return;
  }
  nodes.sort((a, b) => rank(b) - rank(a) || a.metadata.name.localeCompare(b.metadata.name));
  fill("nodes-body", h("table", { class: "grid" },
    h("thead", {}, h("tr", {}, ["node", "health", "accelerators (allocatable / capacity)", "notes"].map((t) => h("th", {}, t)))),
    h("tbody", {}, nodes.map(nodeRow))));
}

function healthOf(node) {
  return ((node.metadata.annotations || {})[HEALTH_ANNOTATION]) || "Healthy";
}

function rank(node) {
  const bad = healthOf(node) !== "Healthy" || (node.spec || {}).unschedulable;
  return bad ? 1 : 0;
}

function nodeRow(node) {
  const status = node.status || {};
  const capacity = status.capacity || {};
  const allocatable = status.allocatable || capacity;
  const health = healthOf(node);
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
    h("td", {}, h("span", { class: `health ${health === "Healthy" ? "ok" : "bad"}` }, health)),
    h("td", {}, devices.length ? devices : "—"),
    h("td", {}, notes.join("; ") || "—"));
}
