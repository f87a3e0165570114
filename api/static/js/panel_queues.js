// ClusterQueues (who has what quota, who uses it, who borrows from whom) and the cohort
// tree (how quota is shared, with subtree totals).

import { h, fill, empty } from "./dom.js";
import { formatNumber, isGpu, unitOf } from "./format.js";

const fmt = (r, n) => `${formatNumber(n)} ${unitOf(r)}`;
const limit = (r, n) => (n === null ? "unlimited" : fmt(r, n));

/** A bar over [0, max(nominal + borrowing room, used)]: own use, lent, idle, borrowed. */
export function quotaBar(f) {
  const room = f.borrowingLimit === null ? f.borrowed : f.borrowingLimit;
  const scale = Math.max(f.nominal + room, f.used, f.nominal, 1e-9);
  const own = Math.min(f.used, f.nominal);
  const lent = Math.min(f.lent, Math.max(0, f.nominal - own));
  const idle = Math.max(0, f.nominal - own - lent);
  const borrowed = Math.max(f.borrowed, f.used - f.nominal, 0);
  const pct = (x) => `${(100 * x) / scale}%`;
  const tip = [
    `${f.flavor} · ${f.resource}`,
    `nominal ${fmt(f.resource, f.nominal)}`,
    `used ${fmt(f.resource, f.used)}`,
    `borrowed ${fmt(f.resource, f.borrowed)} (borrowing limit ${limit(f.resource, f.borrowingLimit)})`,
    `lent ${fmt(f.resource, f.lent)} (lending limit ${limit(f.resource, f.lendingLimit)})`,
  ].join("\n");
  return h("div", { class: "bar", title: tip },
    h("span", { class: "seg used", style: { width: pct(own) } }),
    h("span", { class: "seg lent", style: { width: pct(lent) } }),
    h("span", { class: "seg idle", style: { width: pct(idle) } }),
    h("span", { class: "seg borrowed", style: { width: pct(borrowed) } }),
    h("span", { class: "nominal-mark", style: { left: pct(f.nominal) } }));
}

function interesting(figures) {
  // GPUs are what people queue for; CPU and memory rows only where a queue has nothing else.
  const gpus = figures.filter((f) => isGpu(f.resource));
  return gpus.length ? gpus : figures;
}

function figureRow(f) {
  const extra = [];
  if (f.borrowed > 0) extra.push(h("span", { class: "tag borrowed" }, `+${fmt(f.resource, f.borrowed)} borrowed`));
  if (f.lent > 0) extra.push(h("span", { class: "tag lent" }, `${fmt(f.resource, f.lent)} lent`));
  return h("div", { class: "figure", "data-flavor": f.flavor, "data-resource": f.resource },
    h("span", { class: "flavor" }, f.flavor),
    quotaBar(f),
    h("span", { class: "usage" }, `${formatNumber(f.used)} / ${formatNumber(f.nominal)} ${unitOf(f.resource)}`),
    extra);
}

export function drawQueues(data, page, pageSize, onPage) {
  if (!data.total) {
    fill("queues-body", empty("No ClusterQueues yet: apply a pool (berth apply -f pool.yaml)."));
    return;
  }
  const rows = data.queues.map((q) =>
    h("div", { class: "queue", "data-queue": q.name },
      h("div", { class: "queue-head" },
        h("strong", {}, q.name),
        q.cohort ? h("span", { class: "muted" }, ` cohort ${q.cohort}`) : null,
        h("span", { class: "muted right" }, `${q.counts.admitted} admitted · ${q.counts.pending} pending`)),
      interesting(q.figures).map(figureRow)));
  const pages = Math.ceil(data.total / pageSize);
  const pager = pages > 1
    ? h("div", { class: "pager" },
        h("button", { disabled: page === 0, onclick: () => onPage(page - 1) }, "‹ prev"),
        ` page ${page + 1} of ${pages} (${data.total} queues) `,
        h("button", { disabled: page + 1 >= pages, onclick: () => onPage(page + 1) }, "next ›"))
    : null;
  fill("queues-body", legend(), rows, pager);
}

function legend() {
  const item = (cls, text) => h("span", { class: "legend-item" }, h("span", { class: `swatch ${cls}` }), text);
  return h("div", { class: "legend" },
    item("used", "used (own quota)"), item("lent", "lent to the cohort"),
    item("idle", "idle quota"), item("borrowed", "borrowed"),
    h("span", { class: "muted" }, " · nominal marked │ · hover a bar for limits"));
}

export function drawCohorts(cohorts, allQueues) {
  if (!cohorts.length) {
    fill("cohorts-body", empty("No cohorts: every ClusterQueue uses only its own quota."));
    return;
  }
  const byParent = new Map();
  for (const c of cohorts) {
    const key = c.parent && cohorts.some((o) => o.name === c.parent) ? c.parent : null;
    if (!byParent.has(key)) byParent.set(key, []);
    byParent.get(key).push(c);
  }
  const node = (c) => h("li", { class: "cohort", "data-cohort": c.name },
    h("div", {}, h("strong", {}, `◆ ${c.name}`), " ", totals(c)),
    h("ul", {},
      (byParent.get(c.name) || []).map(node),
      allQueues.filter((q) => q.cohort === c.name).map((q) => h("li", { class: "leaf" }, `▪ ${q.name}`))));
  const lonely = allQueues.filter((q) => !q.cohort);
  fill("cohorts-body",
    h("ul", { class: "tree" }, (byParent.get(null) || []).map(node)),
    lonely.length ? h("p", { class: "muted" }, `Without a cohort: ${lonely.map((q) => q.name).join(", ")}`) : null);
}

function totals(c) {
  const rows = interesting(c.figures).map((f) =>
    h("span", { class: "subtotal" },
      `${f.flavor}: ${formatNumber(f.used)} / ${formatNumber(f.nominal)} ${unitOf(f.resource)}`));
  return h("span", { class: "muted" },
    rows.length ? rows : "no quota", ` · ${c.counts.admitted} admitted, ${c.counts.pending} pending`);
}
