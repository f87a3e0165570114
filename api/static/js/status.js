// Reading ClusterQueue and cohort status documents into one flat shape the panels draw.

import { get, enc } from "./api.js";
import { amountOf } from "./format.js";

/** {flavor, resource, nominal, borrowingLimit, lendingLimit, used, borrowed, lent} as
 *  numbers in the resource's unit (limits null when unlimited). */
export function figuresOf(status) {
  const out = [];
  const push = (flavor, r) => {
    const resource = r.resource || r.name;
    const num = (v) => (v === null || v === undefined ? null : amountOf(resource, v));
    out.push({
      flavor, resource,
      nominal: num(r.nominal) || 0,
      borrowingLimit: num(r.borrowingLimit),
      lendingLimit: num(r.lendingLimit),
      used: num(r.used) || 0,
      borrowed: num(r.borrowed) || 0,
      lent: num(r.lent) || 0,
    });
  };
  for (const r of status.resources || []) push(r.flavor, r);
  for (const f of status.flavors || []) {
    for (const r of f.resources || []) push(f.flavor || f.name, r);
  }
  return out;
}

export function countsOf(status) {
  return {
    pending: status.pendingWorkloads ?? status.pending ?? 0,
    admitted: status.admittedWorkloads ?? status.admitted ?? 0,
    byReason: status.pendingByReason || {},
  };
}

/** ClusterQueue name -> workloads reserving quota while their admission checks run. */
async function reservationsByQueue() {
  const out = {};
  const page = await get("/api/v1/workloads", { state: "QuotaReserved", limit: 500 });
  for (const w of page.items || []) {
    if (w.clusterQueue) out[w.clusterQueue] = (out[w.clusterQueue] || 0) + 1;
  }
  return out;
}

function statusPart(doc) {
  return doc.status && typeof doc.status === "object" ? doc.status : doc;
}

/** Names, cohorts and status of the ClusterQueues on one page of the panel. */
export async function loadQueues(page, pageSize) {
  const list = (await get("/api/v1/clusterqueues")).items || [];
  const all = list.map((m) => ({ name: m.metadata.name, cohort: (m.spec || {}).cohort || null }));
  all.sort((a, b) => a.name.localeCompare(b.name));
  const shown = all.slice(page * pageSize, (page + 1) * pageSize);
  const docs = await Promise.all(shown.map((q) => get(`/api/v1/clusterqueues/${enc(q.name)}`)));
  const checking = await reservationsByQueue();
  const queues = shown.map((q, i) => {
    const status = statusPart(docs[i]);
    const counts = countsOf(status);
    // Reservations waiting for admission checks hold quota but still wait: list them too.
    if (checking[q.name]) {
      counts.pending += checking[q.name];
      counts.byReason = { ...counts.byReason, WaitingForAdmissionCheck:
        (counts.byReason.WaitingForAdmissionCheck || 0) + checking[q.name] };
    }
    return { ...q, figures: figuresOf(status), counts };
  });
  return { total: all.length, all, queues };
}

/** Declared cohorts plus those only named by queues, with parents and subtree status. */
export async function loadCohorts(allQueues) {
  const declared = (await get("/api/v1/cohorts")).items || [];
  const parents = new Map();
  for (const c of declared) parents.set(c.metadata.name, (c.spec || {}).parent || (c.spec || {}).parentName || null);
  for (const q of allQueues) if (q.cohort && !parents.has(q.cohort)) parents.set(q.cohort, null);
  const names = [...parents.keys()].sort();
  const docs = await Promise.all(names.map((n) => get(`/api/v1/cohorts/${enc(n)}`).catch(() => ({}))));
  return names.map((name, i) => {
    const status = statusPart(docs[i]);
    return { name, parent: parents.get(name), figures: figuresOf(status), counts: countsOf(status) };
  });
}
