// The phasekit inspector page: plain ES modules, no build step, talks only to the server that served it.
const view = document.getElementById("view");
const updated = document.getElementById("updated");
let timer = null;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v;
    else node.setAttribute(k, v);
  }
  for (const c of children.flat()) node.append(c instanceof Node ? c : document.createTextNode(c == null ? "" : String(c)));
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
const duration = (ms) => (ms == null ? "-" : ms < 1000 ? `${ms}ms` : `${(ms / 1000).toFixed(1)}s`);

async function getJson(url) {
  const res = await fetch(url, { cache: "no-store" });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error?.message ?? res.statusText);
  return body;
}

function table(headers, rows, id) {
  return el("table", id ? { id } : {}, el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))), el("tbody", {}, rows));
}

async function showRuns() {
  const { runs } = await getJson("/api/runs");
  const rows = runs.map((r) =>
    el("tr", { "data-run": r.id },
      el("td", {}, el("a", { href: `#/run/${encodeURIComponent(r.id)}`, class: "mono" }, r.id)),
      el("td", {}, badge(r.status)),
      el("td", {}, r.ownerTool ?? "-"),
      el("td", {}, r.phase ?? "-"),
      el("td", {}, r.currentStep ?? r.lastStep ?? "-"),
      el("td", {}, r.ageMs == null ? "-" : age(r.ageMs)),
      el("td", { class: "muted" }, r.lockHolder ?? "-")));
  view.replaceChildren(el("h2", {}, "Runs"), runs.length === 0 ? el("p", { class: "muted" }, "No runs in this plan folder yet.") : table(["Run", "Status", "Tool", "Phase", "Step", "Age", "Lock"], rows, "runs"));
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

async function showRun(id) {
  const run = await getJson(`/api/runs/${encodeURIComponent(id)}`);
  const s = run.summary;
  const m = run.metadata ?? {};
  const facts = el("dl", {},
    el("dt", {}, "status"), el("dd", {}, badge(s.status), m.failureReason ? ` ${m.failureReason}` : ""),
    el("dt", {}, "tool"), el("dd", {}, s.ownerTool ?? "-"),
    el("dt", {}, "phase"), el("dd", {}, s.phase ?? "-"),
    el("dt", {}, "lock"), el("dd", {}, s.lockHolder ?? "free"),
    el("dt", {}, "updated"), el("dd", {}, s.updatedAt ?? "-"),
    el("dt", {}, "pending"), el("dd", {}, run.pending ? `${run.pending.signal}: ${run.pending.reason}` : "none"));
  const diagram = run.diagram
    ? el("section", { id: "diagram" }, el("h3", {}, `Workflow: ${run.diagram.name}`), drawNodes(run.diagram.nodes, run.diagram.current, run.diagram.loopable))
    : el("section", { id: "diagram" }, el("h3", {}, "Workflow"), el("p", { class: "muted" }, m.state ? "definitions not found (start the inspector with --defs DIR)" : "this run carries no workflow state"));
  const stepRows = run.steps.map((st) =>
    el("tr", { "data-step": st.stepId },
      el("td", { class: "mono" }, st.stepId), el("td", {}, badge(st.status)), el("td", {}, st.attempt), el("td", {}, duration(st.durationMs)),
      el("td", {}, st.verdict.explanation.replace(/(v1:sha256:[0-9a-f]{12})[0-9a-f]+/g, "$1…")), el("td", { class: "error" }, st.error ?? "")));
  const steps = el("section", {}, el("h3", {}, "Steps"), run.steps.length ? table(["Step", "Status", "Attempt", "Duration", "Reuse", "Error"], stepRows, "steps") : el("p", { class: "muted" }, "No steps yet."));
  const journal = el("section", {}, el("h3", {}, "Journal"),
    el("ol", { class: "timeline", id: "journal" }, run.journal.map((e) => el("li", {}, el("span", { class: "at mono" }, e.at), el("strong", {}, e.event), " ", summary(e)))));
  view.replaceChildren(el("p", {}, el("a", { href: "#/" }, "← all runs")), el("h2", {}, "Run ", el("span", { class: "mono" }, s.id)), facts, diagram, steps, journal);
  if (s.status === "running") schedule(() => showRun(id), 1000);
}

function summary(e) {
  const d = e.event === "metadata-delta" && e.data && Array.isArray(e.data.ops) ? Object.fromEntries(e.data.ops.filter((op) => op.length === 2 && op[0].length === 1).map((op) => [op[0][0], op[1]])) : e.event === "metadata" ? e.data : undefined;
  if (d) return ["status", "phase", "currentStepId", "lastCompletedStepId"].filter((k) => d[k] !== undefined).map((k) => `${k}=${d[k]}`).join(" ");
  if (e.data === undefined) return "";
  const text = JSON.stringify(e.data);
  return text.length > 140 ? `${text.slice(0, 137)}…` : text;
}

function schedule(fn, ms) {
  clearTimeout(timer);
  timer = setTimeout(() => fn().then(stamp, showError), ms);
}
function stamp() {
  updated.textContent = `updated ${new Date().toLocaleTimeString()}`;
}
function showError(error) {
  view.replaceChildren(el("p", { class: "error" }, String(error.message ?? error)), el("p", {}, el("a", { href: "#/" }, "← all runs")));
}

function route() {
  clearTimeout(timer);
  const m = /^#\/run\/(.+)$/.exec(location.hash);
  (m ? showRun(decodeURIComponent(m[1])) : showRuns()).then(stamp, showError);
}
window.addEventListener("hashchange", route);
route();
