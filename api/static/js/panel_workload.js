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

function timeline(history) {
  const entries = history.timeline || [];
  const total = entries.reduce((s, e) => s + (e.seconds || 0), 0) || 1;
  const strip = h("div", { class: "bar timeline" }, entries.map((e) =>
    h("span", {
      class: "seg", title: `${e.code}: ${formatDuration(e.seconds)}`,
      style: { width: `${(100 * (e.seconds || 0)) / total}%`, background: reasonColour(e.code) },
    })));
  return h("div", { class: "wl-timeline" },
    h("strong", {}, "Timeline: "), history.summary || "",
    entries.length ? strip : null,
    h("ol", {}, [
      ...entries.map((e) => ({ at: e.since, node: h("li", {}, `${formatTime(e.since)} · `, reasonChip(e.code), ` for ${formatDuration(e.seconds)}${e.until ? "" : " (now)"}`) })),
      ...(history.events || []).map((e) => ({ at: e.at, node: h("li", { class: "event" }, `${formatTime(e.at)} · ${e.type}${e.reason ? ` (${e.reason})` : ""}`) })),
    ].sort((a, b) => new Date(a.at) - new Date(b.at)).map((x) => x.node)));
}
