// The phasekit inspector page: plain ES modules, no build step, talks only to the server that served it.
// Every request carries this launch's token (from the URL `phasekit ui` printed) in a header.
import { attemptsBox, timelineSection, travelButtons } from "./time-travel.js";
import { approvalSection } from "./approval.js";
const view = document.getElementById("view");
const panel = document.getElementById("panel");
const updated = document.getElementById("updated");
const token = new URLSearchParams(location.search).get("token") ?? "";
let timer = null;
// The page of steps shown, by the cursor of the page next to it (null: the newest); reset when another page is opened.
let stepsAt = null;
// Journal entries whose raw JSON is open, kept across the live page's refreshes.
const openRaw = new Set();
// The journal entries the page holds for the run shown: a refresh asks only for the newer ones.
let journalHeld = { id: null, entries: [] };
// The run page's event stream: the server pushes `changed` when the run's files change (no polling here).
let stream = null;
function watch(id) {
  if (stream?.id === id) return;
  unwatch();
  const source = new EventSource(`${runUrl(id)}/events`);
  source.addEventListener("changed", () => {
    if (!document.getElementById("confirm")) showRun(id, { refresh: true }).then(stamp, showError);
  });
  stream = { id, source };
}
function unwatch() {
  stream?.source.close();
  stream = null;
}

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v);
  }
  for (const c of children.flat(Infinity)) node.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
  return node;
}
const badge = (status) => el("span", { class: `status ${status}` }, status);
function age(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m`;
  if (s < 86400) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}
// Rounded once, as the CLI does (format.ts): never `1m60s`.
function duration(ms) {
  if (ms == null) return "-";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  if (ms < 59950) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  const m = Math.round(ms / 60000);
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}
// The answer early.js asked for before this module loaded, taken once by the first request for that URL.
function early(url, init) {
  const e = window.phasekitEarly;
  if (e?.url !== url || init.method !== undefined) return null;
  window.phasekitEarly = undefined;
  return e.response;
}
async function api(url, init = {}) {
  const res = await (early(url, init) ?? fetch(url, { cache: "no-store", ...init, headers: { "x-phasekit-token": token, ...(init.headers ?? {}) } }));
  const body = await res.json();
  if (!res.ok) throw new Error(body.error?.message ?? res.statusText);
  return body;
}
const runUrl = (id) => `/api/runs/${encodeURIComponent(id)}`;
// What time-travel.js uses of this page.
const helpers = { el, api, runUrl, panel, route: () => route() };

function table(headers, rows, id) {
  return el("table", id ? { id } : {}, el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))), el("tbody", {}, rows));
}

// The runs table's filters, kept across its refreshes (the filter bar is built once per visit, so typing keeps focus).
const filters = { status: "", tool: "", age: "", q: "", page: 0 };
const RUNS_PAGE = 50;
const AGES = { "": "any age", "3600000": "last hour", "86400000": "last day", "604800000": "last week", "2592000000": "last 30 days" };
let lastRuns = [];

function filtered(runs) {
  const q = filters.q.trim().toLowerCase();
  return runs.filter((r) =>
    (filters.status === "" || r.status === filters.status) &&
    (filters.tool === "" || r.ownerTool === filters.tool) &&
    (filters.age === "" || (r.ageMs != null && r.ageMs <= Number(filters.age))) &&
    (q === "" || r.id.toLowerCase().includes(q) || r.runDir.toLowerCase().includes(q)));
}

function select(id, current, options, onchange) {
  const node = el("select", { id }, Object.entries(options).map(([value, text]) => el("option", { value }, text)));
  node.value = current;
  node.addEventListener("change", () => onchange(node.value));
  return node;
}

function filterBar() {
  const statuses = Object.fromEntries([["", "any status"], ...["running", "paused", "completed", "cancelled", "failed", "crashed", "unreadable", "new"].map((x) => [x, x])]);
  const tools = Object.fromEntries([["", "any tool"], ...[...new Set(lastRuns.map((r) => r.ownerTool).filter(Boolean))].sort().map((x) => [x, x])]);
  const set = (key) => (value) => { filters[key] = value; filters.page = 0; drawRuns(); };
  const search = el("input", { id: "runs-search", type: "search", placeholder: "search id or slug", value: filters.q });
  search.addEventListener("input", () => set("q")(search.value));
  return el("p", { id: "runs-filters", class: "filters" },
    search, " ", select("runs-status", filters.status, statuses, set("status")), " ", select("runs-tool", filters.tool, tools, set("tool")), " ", select("runs-age", filters.age, AGES, set("age")));
}

function drawRuns() {
  const wrap = document.getElementById("runs-wrap");
  if (!wrap) return;
  const shown = filtered(lastRuns);
  const pages = Math.max(1, Math.ceil(shown.length / RUNS_PAGE));
  filters.page = Math.min(filters.page, pages - 1);
  const rows = shown.slice(filters.page * RUNS_PAGE, (filters.page + 1) * RUNS_PAGE).map((r) =>
    el("tr", { "data-run": r.id },
      el("td", {}, el("a", { href: `#/run/${encodeURIComponent(r.id)}`, class: "mono" }, r.id)),
      el("td", {}, badge(r.status)),
      el("td", {}, r.ownerTool ?? "-"),
      el("td", {}, r.phase ?? "-"),
      el("td", {}, r.currentStep ?? r.lastStep ?? "-"),
      el("td", {}, r.ageMs == null ? "-" : age(r.ageMs)),
      el("td", { class: "muted" }, r.lockHolder ?? "-")));
  const turn = (by) => () => { filters.page += by; drawRuns(); };
  const pager = pages > 1
    ? el("p", { id: "runs-pager" }, filters.page > 0 ? [el("button", { id: "runs-prev", onclick: turn(-1) }, "← newer"), " "] : "", `page ${filters.page + 1} of ${pages}`, filters.page < pages - 1 ? [" ", el("button", { id: "runs-next", onclick: turn(1) }, "older →")] : "")
    : "";
  wrap.replaceChildren(
    lastRuns.length === 0 ? el("p", { class: "muted" }, "No runs in this plan folder yet.")
      : shown.length === 0 ? el("p", { class: "muted", id: "runs-none" }, `No run matches (${lastRuns.length} in all).`)
      : table(["Run", "Status", "Tool", "Phase", "Step", "Age", "Lock"], rows, "runs"),
    pager);
}

async function showRuns() {
  lastRuns = (await api("/api/runs")).runs;
  if (!document.getElementById("runs-wrap")) view.replaceChildren(el("h2", {}, "Runs"), filterBar(), el("div", { id: "runs-wrap" }));
  drawRuns();
  schedule(showRuns, 3000);
}

function drawNodes(nodes, current, loopable) {
  const flow = el("div", { class: "flow" });
  nodes.forEach((n, i) => {
    if (i > 0) flow.append(el("span", { class: "arrow" }, "→"));
    const isCurrent = n.id === current;
    if (n.kind === "phase") flow.append(el("div", { class: `node${isCurrent ? " current" : ""}`, "data-node": n.id }, n.label));
    else flow.append(el("div", { class: `group${isCurrent ? " current" : ""}`, "data-node": n.id }, el("div", { class: "label" }, n.label), drawNodes(n.children ?? [], current, n.loopable)));
  });
  if (loopable && nodes.length > 1) flow.append(el("span", { class: "loop" }, "↺ loops"));
  return flow;
}

function confirmAction(id, action) {
  clearTimeout(timer);
  const reason = el("input", { id: "confirm-reason", placeholder: "reason (optional)" });
  const result = el("p", { id: "confirm-result" });
  const yes = el("button", { id: "confirm-yes", class: "danger" }, `Yes, ${action}`);
  const close = () => { panel.replaceChildren(); route(); };
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    try {
      const done = await api(`${runUrl(id)}/actions/${action}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ reason: reason.value }) });
      panel.replaceChildren(el("p", { id: "action-done" }, done.text));
      route();
    } catch (error) {
      result.textContent = String(error.message ?? error);
      result.className = "error";
      yes.disabled = false;
    }
  });
  panel.replaceChildren(el("div", { class: "confirm", id: "confirm", role: "dialog" },
    el("p", {}, `${action[0].toUpperCase()}${action.slice(1)} run `, el("span", { class: "mono" }, id), "?"),
    reason, " ", yes, " ", el("button", { id: "confirm-no", onclick: close }, "No"), result));
  reason.focus();
  panel.scrollIntoView({ block: "nearest" });
}

async function showPayload(id, stepId) {
  const pre = el("pre", { id: "payload-output", class: "payload" });
  const more = el("button", { id: "payload-more" }, "Load more");
  const box = el("section", { id: "payload" }, el("h3", {}, "Step ", el("span", { class: "mono" }, stepId)));
  panel.replaceChildren(box);
  panel.scrollIntoView({ block: "nearest" });
  const load = async (offset) => {
    const p = await api(`${runUrl(id)}/steps/${encodeURIComponent(stepId)}/output?offset=${offset}`);
    if (offset === 0) {
      box.append(el("p", { id: "payload-input" }, "Input: not recorded (only its fingerprint ", el("code", {}, p.input.fingerprint), ")"));
      if (!p.output.ok) return void box.append(el("p", { class: "muted", id: "payload-none" }, `Output: ${p.output.message}`));
      box.append(el("p", {}, `Output: ${p.output.bytes} bytes of JSON`), pre);
    }
    pre.append(p.output.text);
    if (p.output.nextOffset == null) more.remove();
    else {
      more.onclick = () => load(p.output.nextOffset).catch(showError);
      box.append(more);
    }
  };
  await load(0);
  box.append(attemptsBox(id, stepId, helpers));
}

// What the run page shows now, as the answer it was drawn from: a refresh that brings the same answer draws nothing.
let drawn = { id: null, key: null };
// `refresh`: asked by the event stream. The server says `changed` whenever it cannot be sure nothing changed (for
// a moment after each write, the files' time stamps cannot tell), so most refreshes bring what is shown already;
// redrawing it anyway replaced the elements under the reader's pointer, selection and scroll.
async function showRun(id, { refresh = false } = {}) {
  const held = journalHeld.id === id ? journalHeld.entries : [];
  const params = new URLSearchParams(stepsAt ?? {});
  if (held.length > 0) {
    params.set("journalAfter", held[held.length - 1].seq);
    // The last state held: the server tells the first new state against it.
    params.set("journalState", [...held].reverse().find((e) => e.event === "metadata")?.seq ?? 0);
  }
  const run = await api(params.toString() !== "" ? `${runUrl(id)}?${params}` : runUrl(id));
  if (run.journalAfter > 0) run.journal = [...held, ...run.journal];
  journalHeld = { id, entries: run.journal };
  // Less what this page does not show and changes by itself: the run's age, and where the answer's journal starts
  // (the first answer holds all of it, a refresh only the newer entries, merged above).
  const key = JSON.stringify([stepsAt, { ...run, journalAfter: null, summary: { ...run.summary, ageMs: null } }]);
  if (refresh && drawn.id === id && drawn.key === key) return;
  drawn = { id, key };
  const s = run.summary;
  const m = run.metadata ?? {};
  const facts = el("dl", {},
    el("dt", {}, "status"), el("dd", {}, badge(s.status), m.failureReason ? ` ${m.failureReason}` : ""),
    el("dt", {}, "tool"), el("dd", {}, s.ownerTool ?? "-"),
    el("dt", {}, "phase"), el("dd", {}, s.phase ?? "-"),
    el("dt", {}, "lock"), el("dd", {}, s.lockHolder ?? "free"),
    el("dt", {}, "updated"), el("dd", {}, s.updatedAt ?? "-"),
    el("dt", {}, "pending"), el("dd", { id: "pending" }, run.pending ? `${run.pending.signal}: ${run.pending.reason}` : "none"),
    run.budget ? [el("dt", {}, "budget"), el("dd", { id: "budget" }, run.budget.text)] : "");
  const actions = el("p", { id: "actions" }, (run.actions ?? []).map((a) => [el("button", { "data-action": a, onclick: () => confirmAction(id, a) }, a), " "]));
  const diagram = run.diagram
    ? el("section", { id: "diagram" }, el("h3", {}, `Workflow: ${run.diagram.name}`), drawNodes(run.diagram.nodes, run.diagram.current, run.diagram.loopable))
    : el("section", { id: "diagram" }, el("h3", {}, "Workflow"), el("p", { class: "muted" }, m.state ? "definitions not found (start the inspector with --defs DIR)" : "this run carries no workflow state"));
  const stepRows = run.steps.map((st) =>
    el("tr", { "data-step": st.stepId },
      el("td", { class: "mono" }, st.stepId), el("td", {}, badge(st.status)), el("td", {}, st.attempt), el("td", {}, duration(st.durationMs)),
      el("td", {}, (st.verdict?.explanation ?? "").replace(/(v1:sha256:[0-9a-f]{12})[0-9a-f]+/g, "$1…")), el("td", { class: "error" }, st.error ?? ""),
      el("td", {}, el("button", { class: "link", "data-payload": st.stepId, onclick: () => showPayload(id, st.stepId).catch(showError) }, "payload"), " ", travelButtons(id, st.stepId, helpers))));
  // The pages next to this one by their cursors: each step once, however many steps the run records meanwhile.
  const { offset, total, before, after } = run.stepsPage;
  const go = (at) => () => { stepsAt = at; showRun(id).then(stamp, showError); };
  const pager = total > run.steps.length
    ? el("p", { id: "steps-pager" }, before ? [el("button", { id: "steps-earlier", onclick: go({ stepsBefore: before }) }, "← earlier"), " "] : "",
        `steps ${offset + 1}–${offset + run.steps.length} of ${total}`,
        after ? [" ", el("button", { id: "steps-later", onclick: go({ stepsAfter: after }) }, "later →")] : "")
    : "";
  const steps = el("section", {}, el("h3", {}, "Steps"), pager,
    run.stepsError ? el("p", { class: "error", id: "steps-error" }, run.stepsError.message) : "",
    run.steps.length ? table(["Step", "Status", "Attempt", "Duration", "Reuse", "Error", ""], stepRows, "steps") : el("p", { class: "muted" }, "No steps yet."));
  const journal = el("section", {}, el("h3", {}, "Journal"),
    run.journalError ? el("p", { class: "error", id: "journal-error" }, `The journal cannot be read: ${run.journalError.message}`) : "",
    el("ol", { class: "timeline", id: "journal" }, run.journal.map(journalItem)));
  view.replaceChildren(el("p", {}, el("a", { href: "#/" }, "← all runs")), el("h2", {}, "Run ", el("span", { class: "mono" }, s.id)), facts, actions, approvalSection(id, run, helpers), diagram, steps, timelineSection(id, helpers), journal);
  watch(id);
}

// An entry as its sentence, the raw entry one click away.
function journalItem(e) {
  const raw = el("details", { "data-seq": e.seq }, el("summary", {}, "raw"), el("pre", { class: "payload" }, JSON.stringify(e, null, 2)));
  if (openRaw.has(e.seq)) raw.open = true;
  raw.addEventListener("toggle", () => (raw.open ? openRaw.add(e.seq) : openRaw.delete(e.seq)));
  return el("li", { "data-event": e.event }, el("span", { class: "at mono" }, e.at), el("span", { class: "sentence" }, e.text ?? e.event), " ", raw);
}

function schedule(fn, ms) {
  clearTimeout(timer);
  timer = setTimeout(() => fn().then(stamp, showError), ms);
}
let stamps = 0;
function stamp() {
  updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
  // Counts the looks the page finished, drawn or not (the browser tests wait on it).
  updated.dataset.looks = String(++stamps);
}
function showError(error) {
  view.replaceChildren(el("p", { class: "error", id: "error" }, String(error?.message ?? error)), el("p", {}, el("a", { href: "#/" }, "← all runs")));
}

function route() {
  clearTimeout(timer);
  const m = /^#\/run\/(.+)$/.exec(location.hash);
  // A hash that is not valid percent-encoding is an error shown, never a page left on "Loading…".
  const page = () => (m ? showRun(decodeURIComponent(m[1])) : showRuns());
  Promise.resolve().then(page).then(stamp, showError);
}
window.addEventListener("hashchange", () => {
  panel.replaceChildren();
  stepsAt = null;
  openRaw.clear();
  journalHeld = { id: null, entries: [] };
  unwatch();
  route();
});
route();
