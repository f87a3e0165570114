// Borrowing (who borrows from whom, and what it costs: /api/v1/borrowing) and Preemptions
// (who preempts whom, over time: /api/v1/preemptions), both as lender/preemptor → borrower/
// victim matrices of ClusterQueues.

import { get } from "./api.js";
import { h, fill, empty } from "./dom.js";
import { amountOf, formatNumber, isGpu, unitOf } from "./format.js";

const slotOf = (i) => `${i.flavor} · ${i.resource}`;

export async function refreshBorrowing(hours) {
  const to = new Date();
  const from = new Date(to.getTime() - hours * 3600 * 1000);
  const report = await get("/api/v1/borrowing", { from: from.toISOString(), to: to.toISOString() });
  const all = [...(report.items || []), ...(report.now || [])];
  if (!all.length) {
    fill("borrowing-body", empty(`Nobody borrowed in the last ${hours}h.`));
    return;
  }
  // One matrix per flavor and resource, GPUs first.
  const slots = [...new Set(all.map(slotOf))].sort((a, b) =>
    Number(!isGpu(a.split(" · ")[1])) - Number(!isGpu(b.split(" · ")[1])) || a.localeCompare(b));
  fill("borrowing-body",
    slots.map((slot) => matrix(slot, report.items.filter((i) => slotOf(i) === slot),
      report.now.filter((i) => slotOf(i) === slot), hours)),
    h("p", { class: "note" }, "Rows lend, columns borrow. Each cell: borrowed now, and resource-hours (cost) over the window; ",
      "a borrower's excess is attributed to lenders in proportion to the quota each leaves unused."));
}

function matrix(slot, window, now, hours) {
  const resource = slot.split(" · ")[1];
  const unit = unitOf(resource);
  const lenders = [...new Set([...window, ...now].map((i) => i.lender))].sort();
  const borrowers = [...new Set([...window, ...now].map((i) => i.borrower))].sort();
  const find = (list, l, b) => list.find((i) => i.lender === l && i.borrower === b);
  return h("div", { class: "matrix-block", "data-slot": slot },
    h("h3", {}, slot),
    h("div", { class: "scroll" }, h("table", { class: "grid matrix" },
      h("thead", {}, h("tr", {}, h("th", { class: "corner" }, "lender ↓ · borrower →"),
        borrowers.map((b) => h("th", { class: "clip", title: b }, b)))),
      h("tbody", {}, lenders.map((l) => h("tr", { "data-lender": l },
        h("th", { class: "clip", title: l }, l),
        borrowers.map((b) => {
          const current = find(now, l, b);
          const past = find(window, l, b);
          if (!current && !past) return h("td", { class: "num none" }, "·");
          const amount = current ? amountOf(resource, current.amount) : 0;
          const hoursUsed = past ? (unit === "GiB" ? past.resourceHours / 2 ** 30 : past.resourceHours) : 0;
          return h("td", { class: "num cell", "data-borrower": b },
            h("div", { class: "now" }, `${formatNumber(amount)} ${unit} now`),
            h("div", { class: "muted hours", "data-hours": hoursUsed }, `${small(hoursUsed)} ${unit}·h / ${hours}h`),
            past && past.cost !== null ? h("div", { class: "muted cost" }, `cost ${formatNumber(past.cost)}`) : null);
        })))))));
}

function small(n) {
  return n > 0 && n < 0.01 ? "<0.01" : formatNumber(n);
}

export async function refreshPreemptions(hours) {
  const data = await get("/api/v1/preemptions", { hours, step: hours > 48 ? 86400 / 4 : 3600 });
  const totals = data.totals || [];
  if (!totals.length) {
    fill("preemptions-body", empty(`No preemptions in the last ${hours}h.`));
    return;
  }
  const name = (q) => q || "(preemptor unknown)";
  const preemptors = [...new Set(totals.map((t) => t.preemptorClusterQueue))].sort();
  const victims = [...new Set(totals.map((t) => t.victimClusterQueue))].sort();
  const total = (p, v) => totals.find((t) => t.preemptorClusterQueue === p && t.victimClusterQueue === v);
  const sum = totals.reduce((s, t) => s + t.count, 0);
  fill("preemptions-body",
    h("p", { class: "usage-summary" }, h("strong", { class: "preemption-total" }, `${sum} preemption${sum === 1 ? "" : "s"}`), ` in ${hours}h`),
    h("div", { class: "scroll" }, h("table", { class: "grid matrix" },
      h("thead", {}, h("tr", {}, h("th", { class: "corner" }, "preemptor ↓ · victim →"),
        victims.map((v) => h("th", { class: "clip", title: v }, v)))),
      h("tbody", {}, preemptors.map((p) => h("tr", { "data-preemptor": p },
        h("th", { class: "clip", title: name(p) }, name(p)),
        victims.map((v) => {
          const t = total(p, v);
          if (!t) return h("td", { class: "num none", "data-victim": v }, "·");
          const lost = Object.entries(t.lostResourceHours).filter(([r]) => isGpu(r));
          return h("td", { class: "num cell", "data-victim": v },
            h("div", { class: "count warn" }, String(t.count)),
            lost.map(([r, hours]) => h("div", { class: "muted lost", "data-resource": r, "data-hours": hours,
              title: "work lost since each victim's last checkpoint (or its start)" },
              `${small(hours)} ${unitOf(r)}·h lost`)));
        })))))),
    timeline(data, hours));
}

/** One row per preemptor → victim pair: when its preemptions happened, bucket by bucket. */
function timeline(data, hours) {
  const step = data.stepSeconds * 1000;
  const start = Math.floor(new Date(data.start).getTime() / step) * step;
  const n = Math.ceil((hours * 3600 * 1000) / step) + 1;
  const pairs = data.totals.map((t) => [t.preemptorClusterQueue, t.victimClusterQueue]);
  const max = Math.max(1, ...data.buckets.flatMap((b) => b.items.map((i) => i.count)));
  return h("table", { class: "grid fixed preemption-timeline" },
    h("thead", {}, h("tr", {}, h("th", {}, "when"),
      h("th", { class: "axis" }, h("span", {}, `${hours}h ago`), h("span", {}, "now")))),
    h("tbody", {}, pairs.map(([p, v]) => h("tr", {},
      h("td", { class: "clip pair", title: `${p || "?"} → ${v}` }, `${p || "?"} → ${v}`),
      h("td", {}, h("svg", { viewBox: `0 0 ${n} 10`, preserveAspectRatio: "none", class: "spark thin" },
        data.buckets.flatMap((b) => b.items.filter((i) => i.preemptorClusterQueue === p && i.victimClusterQueue === v)
          .map((i) => {
            const x = Math.round((new Date(b.start).getTime() - start) / step);
            return h("rect", { x, y: 10 - (10 * i.count) / max, width: 0.9, height: (10 * i.count) / max, fill: "#dc2626" },
              h("title", {}, `${new Date(b.start).toLocaleString()}: ${i.count}`));
          }))))))));
}
