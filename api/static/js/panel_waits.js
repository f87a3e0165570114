// Why queues wait: pending workloads counted by primary reason per queue; a click on a
// reason lists those workloads (server-side filter and pagination).

import { get } from "./api.js";
import { h, fill, empty } from "./dom.js";
import { REASON_ORDER, formatTime, reasonColour } from "./format.js";

export function reasonChip(code, count, onclick) {
  return h(onclick ? "button" : "span",
    { class: "chip", style: { background: reasonColour(code) }, "data-reason": code, onclick },
    count === undefined ? code : `${code} ${count}`);
}

const byPrecedence = (a, b) => REASON_ORDER.indexOf(a) - REASON_ORDER.indexOf(b);

export function drawWaits(queues, onPick) {
  const waiting = queues.filter((q) => q.counts.pending > 0);
  if (!waiting.length) {
    fill("waits-body", empty("Nothing is pending in the queues shown."));
    return;
  }
  const totals = {};
  for (const q of waiting) {
    for (const [code, n] of Object.entries(q.counts.byReason)) totals[code] = (totals[code] || 0) + n;
  }
  const codes = Object.keys(totals).sort(byPrecedence);
  const sum = codes.reduce((s, c) => s + totals[c], 0) || 1;
  const mix = h("div", { class: "bar mix", title: "pending workloads by primary reason" },
    codes.map((c) => h("span", {
      class: "seg", title: `${c}: ${totals[c]}`,
      style: { width: `${(100 * totals[c]) / sum}%`, background: reasonColour(c) },
    })));
  fill("waits-body", mix,
    h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, h("th", {}, "ClusterQueue"), h("th", {}, "pending"), h("th", {}, "by primary reason"))),
      h("tbody", {}, waiting.map((q) =>
        h("tr", { "data-queue": q.name },
          h("td", {}, q.name),
          h("td", { class: "num" }, String(q.counts.pending)),
          h("td", {}, Object.keys(q.counts.byReason).sort(byPrecedence).map((code) =>
            reasonChip(code, q.counts.byReason[code], () => onPick(q.name, code)))))))));
}

/** The pending workloads of one queue with one primary reason. */
export async function listWaiting(queue, code, onOpen, cursor = null) {
  fill("waitlist-body", h("p", { class: "muted" }, `Loading ${code} in ${queue}…`));
  // WaitingForAdmissionCheck: reservations (QuotaReserved) and requeued ones backing off.
  const state = code === "WaitingForAdmissionCheck" ? undefined : "Pending";
  const page = await get("/api/v1/workloads", {
    clusterQueue: queue, reason: code, state, limit: 50, cursor,
  });
  const items = page.items || [];
  const next = page.nextCursor;
  fill("waitlist-body",
    h("h3", {}, reasonChip(code), ` in ${queue}`),
    items.length
      ? h("table", { class: "grid" },
          h("thead", {}, h("tr", {}, ["workload", "priority", "position", "submitted", "why"].map((t) => h("th", {}, t)))),
          h("tbody", {}, items.map((w) =>
            h("tr", { class: "clickable", "data-workload": `${w.namespace}/${w.name}`, onclick: () => onOpen(w.namespace, w.name) },
              h("td", {}, h("a", { href: `#workload=${w.namespace}/${w.name}` }, `${w.namespace}/${w.name}`)),
              h("td", { class: "num" }, String(w.priority ?? "")),
              h("td", { class: "num" }, w.position ?? "—"),
              h("td", {}, formatTime(w.createdAt)),
              h("td", { class: "message" }, w.message || "")))))
      : empty("None any more: the list changed since the counts were drawn."),
    next ? h("button", { onclick: () => listWaiting(queue, code, onOpen, next) }, "more ›") : null);
}
