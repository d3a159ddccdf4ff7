// The inspector's approval: for a run that may wait for a person, a button opens a form in the panel (payload as
// JSON, a reason, the wait's name) that files the decision as `phasekit approve` does. `h` holds the page's
// helpers (app.js): el, api, runUrl, panel, route. The payload is a form built from the wait's JSON Schema (the
// `waiting` entry of ctx.waitForApproval, or the phase's approve gate in the definitions) when it is in the subset
// schema-form.js handles, JSON text otherwise.
import { schemaForm } from "./schema-form.js";

const FINAL = ["completed", "cancelled", "failed"];

/** The approval section of a run page (nothing for a finished run). */
export function approvalSection(id, run, h) {
  if (FINAL.includes(run.summary.status)) return "";
  // The wait the run announced last (ctx.waitForApproval journals `waiting`), to prefill its name and show the prompt.
  const waiting = [...(run.journal ?? [])].reverse().find((e) => e.event === "waiting" && e.data?.for === "approval");
  const wait = waiting?.data ?? run.approveGate ?? {};
  const asks = wait.prompt ? `It asks: ${wait.prompt}` : "A run waits for a person at an approve gate or in ctx.waitForApproval.";
  return h.el("section", { id: "approval" }, h.el("h3", {}, "Approval"), h.el("p", { class: "muted" }, asks), " ",
    h.el("button", { id: "approve-open", onclick: () => approvalForm(id, wait.name ?? "", wait.schema ?? null, h) }, "approve or reject…"));
}

function approvalForm(id, name, schema, h) {
  const form = schemaForm(schema, h.el);
  const data = form?.node ?? h.el("textarea", { id: "approve-data", rows: "3", placeholder: 'payload as JSON, e.g. {"channel":"beta"} (optional)' });
  const nameInput = h.el("input", { id: "approve-name", placeholder: "wait name / phase id (optional)", value: name });
  const reason = h.el("input", { id: "approve-reason", placeholder: "reason (optional)" });
  const result = h.el("p", { id: "approve-result" });
  const send = (reject) => async () => {
    let payload = form?.value();
    if (form === null && data.value.trim() !== "") {
      try {
        payload = JSON.parse(data.value);
      } catch (error) {
        result.textContent = `the payload is not JSON: ${error.message}`;
        result.className = "error";
        return;
      }
    }
    const body = { reject, reason: reason.value, ...(nameInput.value.trim() ? { name: nameInput.value.trim() } : {}), ...(payload === undefined ? {} : { data: payload }) };
    try {
      const done = await h.api(`${h.runUrl(id)}/actions/approve`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      h.panel.replaceChildren(h.el("p", { id: "action-done" }, `${done.decision === "approve" ? "approval" : "rejection"} filed for run ${done.id}: the run takes it when it waits for it`));
      h.route();
    } catch (error) {
      result.textContent = String(error.message ?? error);
      result.className = "error";
    }
  };
  h.panel.replaceChildren(h.el("div", { class: "confirm", id: "approve-form", role: "dialog" },
    h.el("p", {}, "Decide for run ", h.el("span", { class: "mono" }, id)), nameInput, " ", reason, h.el("br"), data, h.el("br"),
    h.el("button", { id: "approve-yes" , onclick: send(false) }, "Approve"), " ", h.el("button", { id: "approve-reject", class: "danger", onclick: send(true) }, "Reject"), " ",
    h.el("button", { id: "approve-close", onclick: () => h.panel.replaceChildren() }, "Close"), result));
}
