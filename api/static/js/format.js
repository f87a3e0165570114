// Units, quantities, durations and the reason palette shared by every panel.

// One colour per wait-reason code, the same on every panel (the order is the catalogue's
// precedence order, so the legend reads like the spec).
export const REASON_COLOURS = {
  Deactivated: "#6b7280",
  Misconfigured: "#b91c1c",
  Suspended: "#92400e",
  NoMatchingFlavor: "#be185d",
  ExceedsMaxQuota: "#7f1d1d",
  ExceedsNodeCapacity: "#991b1b",
  BlockedByQueueHead: "#a16207",
  WaitingForQuota: "#d97706",
  UnhealthyCapacity: "#dc2626",
  InsufficientCapacity: "#7c3aed",
  TopologyPlacementFailed: "#0e7490",
  ReservedByHigherPriority: "#4338ca",
  WaitingForPreemptedWorkloads: "#0369a1",
  WaitingForAdmissionCheck: "#15803d",
  WaitingForPodsReady: "#be185d",
  PendingEvaluation: "#9ca3af",
};
export const REASON_ORDER = Object.keys(REASON_COLOURS);

export function reasonColour(code) {
  return REASON_COLOURS[code] || "#4b5563";
}

const SUFFIXES = {
  m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15,
  Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50,
};

/** A Kubernetes quantity string ("8", "500m", "16Gi") as a number; numbers pass through. */
export function parseQuantity(value) {
  if (value === null || value === undefined || value === "") return 0;
  if (typeof value === "number") return value;
  const match = /^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$/.exec(String(value).trim());
  if (!match) return Number.NaN;
  const scale = match[2] ? SUFFIXES[match[2]] : 1;
  return scale === undefined ? Number.NaN : Number(match[1]) * scale;
}

/** The unit a resource is counted in, for people: GPUs, cores, GiB. */
export function unitOf(resource) {
  if (resource === "cpu") return "cores";
  if (resource === "memory" || resource.endsWith("storage")) return "GiB";
  if (resource === "nvidia.com/gpu" || resource === "amd.com/gpu") return "GPUs";
  if (resource.startsWith("nvidia.com/mig-")) return "MIG slices";
  if (resource === "pods") return "pods";
  return resource.split("/").pop();
}

export function isGpu(resource) {
  return /gpu|mig-/.test(resource);
}

/** A plain number in the resource's unit (memory in GiB). */
export function amountOf(resource, quantity) {
  const n = parseQuantity(quantity);
  return unitOf(resource) === "GiB" ? n / 2 ** 30 : n;
}

export function formatNumber(n) {
  if (!Number.isFinite(n)) return "?";
  if (Number.isInteger(n)) return String(n);
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : String(Math.round(n * 100) / 100);
}

/** "8 GPUs", "1.5 cores", "768 GiB". */
export function formatAmount(resource, quantity) {
  return `${formatNumber(amountOf(resource, quantity))} ${unitOf(resource)}`;
}

/** "2h 5m", "40m", "12s". */
export function formatDuration(seconds) {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return "—";
  const s = Math.max(0, Math.round(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return h ? `${d}d ${h}h` : `${d}d`;
  if (h) return m ? `${h}h ${m}m` : `${h}h`;
  if (m) return `${m}m`;
  return `${s}s`;
}

export function formatTime(iso) {
  if (!iso) return "—";
  const t = new Date(iso);
  return Number.isNaN(t.getTime()) ? String(iso) : t.toLocaleString();
}
