// Wiring: refresh every panel every few seconds without reloading; ask for a token on 401.

import { Unauthorized, setToken, token } from "./api.js";
import { h, fill } from "./dom.js";
import { refreshTrends, refreshUsage } from "./panel_history.js";
import { refreshNodes, refreshPool } from "./panel_pool.js";
import { drawCohorts, drawQueues } from "./panel_queues.js";
import { refreshNodeMap, refreshRunning } from "./panel_running.js";
import { refreshBorrowing, refreshPreemptions } from "./panel_sharing.js";
import { drawWaits, listWaiting } from "./panel_waits.js";
import { openWorkload, refreshWorkload } from "./panel_workload.js";
import { get } from "./api.js";
import { loadCohorts, loadQueues } from "./status.js";

const PERIOD_MS = 5000;
const PAGE_SIZE = 25;
const state = { page: 0, hours: 24, picked: null, timer: null, busy: false };

async function panel(id, work) {
  try {
    await work();
    document.getElementById(id)?.classList.remove("failed");
  } catch (error) {
    if (error instanceof Unauthorized) throw error;
    document.getElementById(id)?.classList.add("failed");
    fill(`${id}-body`, h("p", { class: "error" }, `Could not load: ${error.message}`));
  }
}

async function queuesAndWaits() {
  const [data, ages] = await Promise.all([loadQueues(state.page, PAGE_SIZE), get("/api/v1/pending-ages")]);
  drawQueues(data, state.page, PAGE_SIZE, (page) => { state.page = page; refresh(); });
  drawWaits(data.queues, pick, ages.items || []);
  await panel("running", () => refreshRunning(data.all.map((q) => q.name), open));
  const cohorts = await loadCohorts(data.all);
  drawCohorts(cohorts, data.all);
}

function open(namespace, name) {
  return panel("workload", () => openWorkload(namespace, name));
}

function pick(queue, code) {
  state.picked = { queue, code };
  return panel("waitlist", () => listWaiting(queue, code, open));
}

export async function refresh() {
  if (state.busy) return;
  state.busy = true;
  try {
    await Promise.all([
      panel("pool", refreshPool),
      panel("queues", queuesAndWaits),
      panel("nodes", refreshNodes),
      panel("nodemap", refreshNodeMap),
      panel("borrowing", () => refreshBorrowing(state.hours)),
      panel("preemptions", () => refreshPreemptions(state.hours)),
      panel("trends", () => refreshTrends(state.hours)),
      panel("usage", () => refreshUsage(state.hours)),
      panel("workload", refreshWorkload),
      state.picked ? panel("waitlist", () => listWaiting(state.picked.queue, state.picked.code, open)) : null,
    ]);
    hideToken();
    document.getElementById("updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
  } catch (error) {
    if (error instanceof Unauthorized) askToken(error.message);
    else throw error;
  } finally {
    state.busy = false;
  }
}

function askToken(message) {
  const box = document.getElementById("auth");
  box.hidden = false;
  document.getElementById("auth-message").textContent =
    `The API needs a bearer token (${message}). It is kept in this browser's localStorage.`;
}

function hideToken() {
  document.getElementById("auth").hidden = true;
}

function start() {
  document.getElementById("auth-form").addEventListener("submit", (event) => {
    event.preventDefault();
    setToken(document.getElementById("auth-token").value.trim());
    refresh();
  });
  document.getElementById("auth-token").value = token();
  document.getElementById("workload-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const [namespace, name] = document.getElementById("workload-input").value.trim().split("/");
    if (namespace && name) open(namespace, name);
  });
  document.getElementById("hours").addEventListener("change", (event) => {
    state.hours = Number(event.target.value);
    refresh();
  });
  document.getElementById("live").addEventListener("change", (event) => {
    clearInterval(state.timer);
    if (event.target.checked) state.timer = setInterval(refresh, PERIOD_MS);
  });
  const linked = /^#workload=([^/]+)\/(.+)$/.exec(window.location.hash);
  if (linked) open(decodeURIComponent(linked[1]), decodeURIComponent(linked[2]));
  refresh();
  state.timer = setInterval(refresh, PERIOD_MS);
}

start();
