// Running now (who uses which GPUs right now?) and the node map (where is capacity, and
// what runs where?), from /api/v1/workloads?state=Admitted and /api/v1/node-map.

import { get } from "./api.js";
import { h, fill, empty, cols } from "./dom.js";
import { amountOf, formatAmount, formatDuration, formatNumber, formatTime, isGpu, unitOf } from "./format.js";

const filters = { clusterQueue: "", flavor: "", node: "" };
let redraw = () => {};

/** GPUs (else every resource) of a requests map, as "8 GPUs". */
function gpusOf(requests) {
  const entries = Object.entries(requests || {});
  const gpus = entries.filter(([r]) => isGpu(r));
  return (gpus.length ? gpus : entries).map(([r, q]) => formatAmount(r, q)).join(", ") || "—";
}

function ago(iso) {
  return iso ? `${formatDuration((Date.now() - new Date(iso).getTime()) / 1000)} ago` : "—";
}

function cell(cls, text, title) {
  return h("td", { class: `${cls} clip`, title: title || text }, text);
}

export async function refreshRunning(queueNames, onOpen) {
  const page = await get("/api/v1/workloads", {
    state: "Admitted", clusterQueue: filters.clusterQueue, limit: 200,
  });
  redraw = () => refreshRunning(queueNames, onOpen);
  const items = (page.items || []).filter((w) =>
    (!filters.flavor || w.flavors.includes(filters.flavor))
    && (!filters.node || Object.keys(w.nodes).some((n) => n.includes(filters.node))));
  const flavors = [...new Set((page.items || []).flatMap((w) => w.flavors))].sort();
  const choose = (key) => (event) => { filters[key] = event.target.value.trim(); redraw(); };
  const controls = h("div", { class: "filters" },
    h("label", {}, "ClusterQueue ",
      h("select", { id: "running-queue", onchange: choose("clusterQueue") },
        h("option", { value: "" }, "all"),
        queueNames.map((q) => h("option", { value: q, selected: q === filters.clusterQueue }, q)))),
    h("label", {}, "flavor ",
      h("select", { id: "running-flavor", onchange: choose("flavor") },
        h("option", { value: "" }, "all"),
        flavors.map((f) => h("option", { value: f, selected: f === filters.flavor }, f)))),
    h("label", {}, "node ",
      h("input", { id: "running-node", value: filters.node, placeholder: "name contains", size: 12, onchange: choose("node") })));
  fill("running-body", controls,
    items.length
      ? h("table", { class: "grid fixed" }, cols("24%", "14%", "12%", "10%", "26%", "14%"),
          h("thead", {}, h("tr", {}, ["workload", "ClusterQueue", "flavor", "GPUs", "nodes", "running since"].map((t) => h("th", {}, t)))),
          h("tbody", {}, items.map((w) => {
            const key = `${w.namespace}/${w.name}`;
            const nodes = Object.entries(w.nodes).map(([n, pods]) => `${n} (${pods})`).join(", ");
            return h("tr", { class: "clickable", "data-workload": key, onclick: () => onOpen(w.namespace, w.name) },
              cell("name", key),
              cell("queue", w.clusterQueue || "—"),
              cell("flavor", w.flavors.join(", ") || "—"),
              h("td", { class: "num gpus" }, gpusOf(w.requests)),
              cell("nodes", nodes || "— (quota only)", nodes ? `pods per node: ${nodes}` : "admitted on quota alone: no node inventory"),
              h("td", { class: "since", title: formatTime(w.admittedAt) }, ago(w.admittedAt)));
          })))
      : empty("Nothing admitted matches."),
    page.nextCursor ? h("p", { class: "note" }, "The first 200 admitted workloads are shown; narrow by ClusterQueue.") : null);
}

export async function refreshNodeMap() {
  const map = await get("/api/v1/node-map");
  const nodes = map.items || [];
  if (!nodes.length) {
    fill("nodemap-body", empty("No Nodes in the ledger (standalone pools may have none)."));
    return;
  }
  fill("nodemap-body",
    h("div", { class: "legend" },
      h("span", { class: "legend-item" }, h("span", { class: "swatch used" }), "allocated"),
      h("span", { class: "legend-item" }, h("span", { class: "swatch idle" }), "free"),
      h("span", { class: "legend-item" }, h("span", { class: "swatch unhealthy" }), "unhealthy")),
    h("div", { class: "nodemap" }, nodes.map(nodeCard)));
}

function nodeCard(node) {
  const gpus = node.resources.filter((r) => isGpu(r.resource));
  const shown = gpus.length ? gpus : node.resources;
  return h("div", { class: `node-card ${node.health === "Healthy" && node.takesWork ? "" : "bad"}`, "data-node": node.node },
    h("div", { class: "node-head" },
      h("strong", { class: "clip", title: node.node }, node.node),
      h("span", { class: `health ${node.health === "Healthy" ? "ok" : "bad"}` }, node.health),
      node.takesWork ? null : h("span", { class: "tag lent", title: "cordoned, under repair or not Ready" }, "takes no work")),
    node.flavors.length ? h("div", { class: "muted small clip" }, node.flavors.join(", ")) : null,
    shown.map((r) => devices(r)),
    node.workloads.length
      ? h("ul", { class: "residents" }, node.workloads.map((w) => {
          const key = w.workload;
          const held = gpusOf(w.held);
          return h("li", { class: "clip", "data-workload": key, title: `${key} · ClusterQueue ${w.clusterQueue} · ${w.pods} pod(s) · ${held}` },
            `${key} `, h("span", { class: "muted" }, `${held} · ${w.clusterQueue}`));
        }))
      : h("div", { class: "muted small" }, "nothing placed here"));
}

function devices(r) {
  const n = (q) => amountOf(r.resource, q);
  const cap = n(r.capacity);
  const scale = Math.max(cap, n(r.allocated), 1);
  const pct = (x) => `${(100 * Math.max(0, x)) / scale}%`;
  const unit = unitOf(r.resource);
  return h("div", { class: "devices", "data-resource": r.resource },
    h("div", { class: "bar", title: `${r.resource}: ${formatAmount(r.resource, r.allocated)} allocated of ${formatAmount(r.resource, r.capacity)}` },
      h("span", { class: "seg used", style: { width: pct(n(r.allocated)) } }),
      h("span", { class: "seg unhealthy", style: { width: pct(n(r.unhealthy)) } }),
      h("span", { class: "seg idle", style: { width: pct(n(r.free)) } })),
    h("div", { class: "device-counts" },
      h("span", { class: "allocated" }, `${formatNumber(n(r.allocated))} allocated`), " · ",
      h("span", { class: "free" }, `${formatNumber(n(r.free))} free`), " · ",
      h("span", { class: `unhealthy${n(r.unhealthy) > 0 ? " warn" : ""}` }, `${formatNumber(n(r.unhealthy))} unhealthy`),
      ` of ${formatNumber(cap)} ${unit}`));
}
