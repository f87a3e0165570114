// Why queues wait: pending workloads counted by primary reason per queue; a click on a
// reason lists those workloads (server-side filter and pagination).

import { get } from "./api.js";
import { h, fill, empty, cols } from "./dom.js";
import { REASON_ORDER, formatDuration, formatTime, reasonColour } from "./format.js";

export function reasonChip(code, count, onclick) {
  return h(onclick ? "button" : "span",
    { class: "chip", style: { background: reasonColour(code) }, "data-reason": code, onclick },
    count === undefined ? code : `${code} ${count}`);
}

const byPrecedence = (a, b) => REASON_ORDER.indexOf(a) - REASON_ORDER.indexOf(b);

/** ages: /api/v1/pending-ages items (per ClusterQueue: oldest and p90 wait so far). */
export function drawWaits(queues, onPick, ages = []) {
  const age = new Map(ages.map((a) => [a.clusterQueue, a]));
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
      h("thead", {}, h("tr", {}, ["ClusterQueue", "pending", "oldest", "p90 wait", "by primary reason"].map((t) => h("th", {}, t)))),
      h("tbody", {}, waiting.map((q) =>
        h("tr", { "data-queue": q.name },
          h("td", { class: "clip name", title: q.name }, q.name),
          h("td", { class: "num" }, String(q.counts.pending)),
          h("td", { class: "num oldest", "data-seconds": age.get(q.name)?.oldestSeconds, title: "the longest wait so far (since creation or the latest requeue)" },
            formatDuration(age.get(q.name)?.oldestSeconds)),
          h("td", { class: "num p90", "data-seconds": age.get(q.name)?.p90Seconds, title: "nine in ten of its pending workloads have waited at most this" },
            formatDuration(age.get(q.name)?.p90Seconds)),
          h("td", {}, Object.keys(q.counts.byReason).sort(byPrecedence).map((code) =>
            reasonChip(code, q.counts.byReason[code], () => onPick(q.name, code)))))))));
}

/** The pending workloads of one queue with one primary reason, grouped by their message
 *  (one sentence per group, however many workloads say it). */
export async function listWaiting(queue, code, onOpen, cursor = null) {
  fill("waitlist-body", h("p", { class: "muted" }, `Loading ${code} in ${queue}…`));
  // WaitingForAdmissionCheck: reservations (QuotaReserved) and requeued ones backing off.
  const state = code === "WaitingForAdmissionCheck" ? undefined : "Pending";
  const page = await get("/api/v1/workloads", {
    clusterQueue: queue, reason: code, state, limit: 50, cursor,
  });
  const items = page.items || [];
  const next = page.nextCursor;
  const groups = new Map();
  for (const w of items) {
    const message = w.message || "";
    if (!groups.has(message)) groups.set(message, []);
    groups.get(message).push(w);
  }
  fill("waitlist-body",
    h("h3", {}, reasonChip(code), ` in ${queue}`),
    items.length
      ? [...groups].map(([message, members]) => h("div", { class: "wait-group" },
          h("p", { class: "wait-message" }, h("span", { class: "group-count" }, `${members.length}×`), " ", message || "(no message)"),
          h("table", { class: "grid fixed" }, cols("40%", "12%", "12%", "36%"),
            h("thead", {}, h("tr", {}, ["workload", "priority", "position", "submitted"].map((t) => h("th", {}, t)))),
            h("tbody", {}, members.map((w) => {
              const key = `${w.namespace}/${w.name}`;
              return h("tr", { class: "clickable", "data-workload": key, onclick: () => onOpen(w.namespace, w.name) },
                h("td", { class: "clip name", title: key }, h("a", { href: `#workload=${key}` }, key)),
                h("td", { class: "num" }, String(w.priority ?? "")),
                h("td", { class: "num" }, w.position ?? "—"),
                h("td", { class: "clip", title: formatTime(w.createdAt) },
                  `${formatDuration((Date.now() - new Date(w.createdAt).getTime()) / 1000)} ago`));
            })))))
      : empty("None any more: the list changed since the counts were drawn."),
    next ? h("button", { onclick: () => listWaiting(queue, code, onOpen, next) }, "more ›") : null);
}
