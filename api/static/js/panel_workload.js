// Workload drill-down: why is this job waiting, what would make it run, when will it start.

import { get, enc } from "./api.js";
import { h, fill, empty } from "./dom.js";
import { formatAmount, formatDuration, formatTime, reasonColour } from "./format.js";
import { reasonChip } from "./panel_waits.js";

let current = null; // "namespace/name" shown, refreshed with the rest of the page

export function shownWorkload() {
  return current;
}

export async function openWorkload(namespace, name) {
  current = `${namespace}/${name}`;
  const input = document.getElementById("workload-input");
  if (input) input.value = current;
  if (window.location.hash !== `#workload=${current}`) window.history.replaceState(null, "", `#workload=${current}`);
  await refreshWorkload();
  document.getElementById("workload")?.scrollIntoView({ behavior: "smooth", block: "start" });
}

export async function refreshWorkload() {
  if (!current) {
    fill("workload-body", empty("Pick a workload from “Why queues wait”, or type namespace/name."));
    return;
  }
  const [namespace, name] = current.split("/");
  let detail;
  let history;
  try {
    [detail, history] = await Promise.all([
      get(`/api/v1/workloads/${enc(namespace)}/${enc(name)}`),
      get(`/api/v1/workloads/${enc(namespace)}/${enc(name)}/history`),
    ]);
  } catch (error) {
    if (error.status === 404) {
      fill("workload-body", empty(`No workload ${current}.`));
      return;
    }
    throw error;
  }
  fill("workload-body", summary(detail), why(detail), ahead(detail), timeline(history));
}

function summary(w) {
  const requests = Object.entries(w.requests || {}).map(([r, q]) => formatAmount(r, q)).join(", ");
  const where = w.clusterQueue ? `ClusterQueue ${w.clusterQueue}` : `LocalQueue ${w.queueName}`;
  return h("div", { class: "wl-summary" },
    h("h3", {}, `${w.namespace}/${w.name}`, " ", h("span", { class: `state ${w.state}` }, w.state)),
    h("p", {}, `${where} · priority ${w.priority}${w.priorityClassName ? ` (${w.priorityClassName})` : ""}`,
      ` · requests ${requests || "nothing"} · submitted ${formatTime(w.createdAt)}`,
      w.evictionCount ? ` · evicted ${w.evictionCount}×` : ""),
    w.admission
      ? h("p", {}, "Admitted to ", h("strong", {}, w.admission.clusterQueue), ": ",
          w.admission.podSetAssignments.map((a) => `${a.name} → ${Object.values(a.flavors).join(", ")}`).join("; "))
      : null);
}

function why(w) {
  if (w.state !== "Pending") return null;
  const reasons = w.reasons || [];
  const primary = reasons[0];
  const eta = w.estimatedStart;
  return h("div", { class: "wl-why" },
    primary
      ? h("p", { class: "primary-reason", "data-reason": primary.code }, reasonChip(primary.code), " ", primary.message)
      : h("p", {}, "Not evaluated yet."),
    reasons.length > 1
      ? h("details", {}, h("summary", {}, `${reasons.length - 1} more blocking reason(s)`),
          h("ul", {}, reasons.slice(1).map((r) => h("li", {}, reasonChip(r.code), " ", r.message))))
      : null,
    (w.hints || []).length
      ? h("div", {}, h("strong", {}, "What would help: "), h("ul", { class: "hints" }, w.hints.map((t) => h("li", {}, t))))
      : null,
    h("p", {},
      h("strong", {}, "Position: "), w.position ?? "—",
      w.aheadCount !== null && w.aheadCount !== undefined ? ` (${w.aheadCount} ahead)` : "",
      " · ", h("strong", {}, "Estimated start: "),
      eta ? `${formatTime(eta.at)} — ${eta.basis}` : "unknown (no history to estimate from)"));
}

function ahead(w) {
  if (w.state !== "Pending" || !(w.ahead || []).length) return null;
  return h("div", {}, h("strong", {}, "Ahead of it"),
    h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, ["#", "workload", "priority", "requests", "reason"].map((t) => h("th", {}, t)))),
      h("tbody", {}, w.ahead.map((a) => h("tr", {},
        h("td", { class: "num" }, String(a.position)),
        h("td", {}, `${a.namespace}/${a.name}`),
        h("td", { class: "num" }, String(a.priority)),
        h("td", {}, Object.entries(a.requests || {}).map(([r, q]) => formatAmount(r, q)).join(", ")),
        h("td", {}, a.reason ? reasonChip(a.reason) : "—"))))));
}

// The server words, merges and orders the rows (quota/core/timeline.py); this draws them:
// the summary, who evicted it, a strip of the waits in time order, and the rows (the last
// ROWS_SHOWN open, the earlier ones folded).
const ROWS_SHOWN = 30;

function timeline(history) {
  const rows = history.rows || [];
  const waits = rows.filter((r) => r.kind === "Waiting");
  const total = waits.reduce((s, r) => s + (r.seconds || 0), 0) || 1;
  const strip = h("div", { class: "bar timeline" }, waits.map((r) =>
    h("span", {
      class: "seg", title: `${r.code}: ${formatDuration(r.seconds)}`,
      style: { width: `${(100 * (r.seconds || 0)) / total}%`, background: reasonColour(r.code) },
    })));
  const earlier = rows.slice(0, Math.max(0, rows.length - ROWS_SHOWN));
  const shown = rows.slice(earlier.length);
  return h("div", { class: "wl-timeline" },
    h("p", {}, h("strong", {}, "Timeline: "), h("span", { class: "wl-history-summary" }, history.summary || "")),
    evictedBy(history),
    waits.length ? strip : null,
    earlier.length
      ? h("details", {}, h("summary", {}, `${earlier.length} earlier row(s)`), h("ol", {}, earlier.map(row)))
      : null,
    h("ol", { start: String(earlier.length + 1) }, shown.map(row)));
}

function row(r) {
  const when = `${formatTime(r.at)} · `;
  if (r.kind === "Waiting") return h("li", { "data-kind": r.kind }, when, reasonChip(r.code), " ", r.text.slice(r.code.length).trim());
  return h("li", { class: "event", "data-kind": r.kind }, when, r.text);
}

/** "Evicted 3×: by team-a/boss-1 (ClusterQueue owner) 2×, NodeUnhealthy 1×", most first. */
function evictedBy(history) {
  const evictions = history.evictions || [];
  if (!evictions.length) return null;
  const counts = new Map();
  for (const e of evictions) {
    const who = e.preemptor
      ? `${e.preemptor.workload} (ClusterQueue ${e.preemptor.clusterQueue || "unknown"})`
      : e.reason || "unknown reason";
    counts.set(who, (counts.get(who) || 0) + 1);
  }
  const ordered = [...counts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  return h("p", { class: "wl-evicted-by" }, h("strong", {}, `Evicted ${evictions.length}×: `),
    ordered.map(([who, n]) => `${who} ${n}×`).join(", "));
}
