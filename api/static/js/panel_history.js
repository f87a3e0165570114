// Trends (is it getting better or worse?) and Usage (who consumed what), from the ledger's
// history through /api/v1/trends and /api/v1/usage.

import { get } from "./api.js";
import { h, fill, empty } from "./dom.js";
import { formatDuration, formatNumber, isGpu, unitOf } from "./format.js";

export async function refreshTrends(hours) {
  const data = await get("/api/v1/trends", { hours, step: hours > 48 ? 86400 / 4 : 3600 });
  const buckets = data.buckets || [];
  const admissions = buckets.map((b) => b.admissions);
  const preemptions = buckets.map((b) => b.preemptions);
  const waits = buckets.map((b) => b.waitP90Seconds);
  const total = (xs) => xs.reduce((s, x) => s + x, 0);
  const known = buckets.filter((b) => b.waitP50Seconds !== null);
  const last = known[known.length - 1];
  fill("trends-body",
    h("div", { class: "trend" },
      h("div", { class: "trend-label" }, h("strong", {}, `${total(admissions)} admissions`), ` in ${hours}h`),
      bars(admissions, "admissions", "#2563eb", buckets)),
    h("div", { class: "trend" },
      h("div", { class: "trend-label" }, h("strong", {}, `${total(preemptions)} preemptions`), ` in ${hours}h`),
      bars(preemptions, "preemptions", "#dc2626", buckets)),
    h("div", { class: "trend" },
      h("div", { class: "trend-label" }, h("strong", {}, "wait to admission (p90)"),
        last ? ` latest p50 ${formatDuration(last.waitP50Seconds)}, p90 ${formatDuration(last.waitP90Seconds)}` : " no admissions yet"),
      line(waits, buckets)));
}

const W = 480;
const H = 48;

function bars(values, label, colour, buckets) {
  const max = Math.max(1, ...values);
  const w = W / Math.max(1, values.length);
  return h("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", class: "spark", role: "img", "aria-label": label },
    values.map((v, i) => h("rect", {
      x: i * w + 0.5, y: H - (H * v) / max, width: Math.max(0.5, w - 1), height: (H * v) / max, fill: colour,
    }, h("title", {}, `${new Date(buckets[i].start).toLocaleString()}: ${v} ${label}`))));
}

function line(values, buckets) {
  const known = values.map((v, i) => [v, i]).filter(([v]) => v !== null && v !== undefined);
  const max = Math.max(1, ...known.map(([v]) => v));
  const w = W / Math.max(1, values.length);
  const y = (v) => H - 2 - ((H - 4) * v) / max;
  // Points sit in the middle of their bucket, like the bars above them.
  const points = known.map(([v, i]) => `${(i + 0.5) * w},${y(v)}`).join(" ");
  return h("svg", { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: "none", class: "spark", role: "img", "aria-label": "admission wait p90" },
    known.length ? h("polyline", { points, fill: "none", stroke: "#d97706", "stroke-width": 2, "vector-effect": "non-scaling-stroke" }) : null,
    known.map(([v, i]) => h("rect", { x: i * w, y: y(v) - 2, width: w, height: 4, fill: "#d97706", opacity: 0.8 },
      h("title", {}, `${new Date(buckets[i].start).toLocaleString()}: p90 ${formatDuration(v)}`))));
}

export async function refreshUsage(hours) {
  const to = new Date();
  const from = new Date(to.getTime() - hours * 3600 * 1000);
  const report = await get("/api/v1/usage", {
    from: from.toISOString(), to: to.toISOString(), groupBy: "clusterQueue,flavor",
  });
  const items = (report.items || []).filter((i) => i.resourceSeconds > 0);
  const gpus = items.filter((i) => isGpu(i.resource));
  const shown = (gpus.length ? gpus : items).sort((a, b) => b.resourceSeconds - a.resourceSeconds);
  if (!shown.length) {
    fill("usage-body", empty(`Nothing metered in the last ${hours}h.`));
    return;
  }
  const max = Math.max(...shown.map((i) => i.resourceHours));
  // Of what was held: useful work, work lost to preemption (since the last checkpoint),
  // and work lost to hardware faults (not charged to the tenant).
  const share = (seconds) => `${(100 * seconds) / 3600 / (max || 1)}%`;
  const useful = (i) => Math.max(0, i.resourceSeconds - i.wasteResourceSeconds - i.faultResourceSeconds);
  const costs = shown.filter((i) => i.cost !== null);
  const total = costs.reduce((sum, i) => sum + i.cost, 0);
  const waste = shown.reduce((sum, i) => sum + i.wasteResourceSeconds / 3600, 0);
  const fault = shown.reduce((sum, i) => sum + i.faultResourceSeconds / 3600, 0);
  const unit = unitOf(shown[0].resource);
  fill("usage-body",
    h("p", { class: "usage-summary" },
      h("span", { class: "usage-cost" }, costs.length ? `cost ${formatNumber(total)}` : "no prices set"),
      " · ",
      h("span", { class: "usage-waste" }, `preemption waste ${small(waste)} ${unit}·h`),
      " · ",
      h("span", { class: "usage-fault" }, `hardware faults ${small(fault)} ${unit}·h (not charged)`)),
    h("table", { class: "grid" },
      h("thead", {}, h("tr", {}, ["ClusterQueue", "flavor", "resource-hours", "", "workloads",
        "waste", "faults", "cost"].map((t) => h("th", {}, t)))),
      h("tbody", {}, shown.map((i) => h("tr", { "data-queue": i.group.clusterQueue || "" },
        h("td", {}, i.group.clusterQueue || "—"),
        h("td", {}, i.group.flavor || "—"),
        h("td", { class: "num" }, `${small(hoursIn(i))} ${unitOf(i.resource)}·h`),
        h("td", { class: "barcell" }, h("div", { class: "bar" },
          h("span", { class: "seg used", style: { width: share(useful(i)) } }),
          h("span", { class: "seg waste", title: "lost to preemption",
            style: { width: share(i.wasteResourceSeconds) } }),
          h("span", { class: "seg fault", title: "lost to hardware faults (not charged)",
            style: { width: share(i.faultResourceSeconds) } }))),
        h("td", { class: "num" }, String(i.workloads)),
        h("td", { class: "num waste" }, small(secondsIn(i, i.wasteResourceSeconds))),
        h("td", { class: "num fault" }, small(secondsIn(i, i.faultResourceSeconds))),
        h("td", { class: "num cost" }, i.cost === null ? "—" : formatNumber(i.cost)))))));
}

function secondsIn(item, seconds) {
  return hoursIn({ ...item, resourceHours: seconds / 3600 });
}

function small(n) {
  return n > 0 && n < 0.01 ? "<0.01" : formatNumber(n);
}

function hoursIn(item) {
  // Memory is metered in bytes·s; people read GiB·h.
  return unitOf(item.resource) === "GiB" ? item.resourceHours / 2 ** 30 : item.resourceHours;
}
