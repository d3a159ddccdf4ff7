// The inspector's time travel: a run's timeline, a step's failed attempts, and fork / rerun from a step (each
// behind a confirmation). `h` holds the page's helpers (app.js): el, api, runUrl, panel, route.

const KIND_LABEL = { step: "step", attempt: "attempt", transition: "move", control: "control", gate: "gate", state: "state", "time-travel": "time travel", event: "event" };

/** The timeline section of a run page; it fills itself from /timeline (newest page). */
export function timelineSection(id, h) {
  const list = h.el("ol", { class: "timeline", id: "timeline-list" });
  const now = h.el("p", { id: "timeline-now", class: "muted" });
  const forks = h.el("p", { id: "forks", class: "muted" });
  const section = h.el("section", { id: "timeline" }, h.el("h3", {}, "Timeline"), now, forks, list);
  h.api(`${h.runUrl(id)}/timeline`).then((t) => {
    const c = t.current;
    now.textContent = `now: ${c.status}${c.phase ? `, phase ${c.phase}` : ""}${c.step ? `, at step ${c.step}` : ""}` +
      (t.page.total > t.items.length ? ` (the newest ${t.items.length} of ${t.page.total} events)` : "");
    // The tree of forks, one level each way: the fork's source is linked from its `forked` item below.
    if (t.forks?.length) {
      forks.replaceChildren("forks of this run: ", ...t.forks.flatMap((f, i) => [i > 0 ? ", " : "",
        h.el("a", { class: "fork", href: `#/run/${encodeURIComponent(f.id)}` }, f.id), ` (at ${f.at})`]));
    }
    // The current position: the last item about the step the run is at.
    const currentAt = c.step == null ? -1 : t.items.map((x) => x.step).lastIndexOf(c.step);
    list.replaceChildren(...t.items.map((x, i) =>
      h.el("li", { "data-kind": x.kind, ...(x.step ? { "data-step": x.step } : {}), ...(i === currentAt ? { class: "current" } : {}) },
        h.el("span", { class: "at mono" }, x.at), h.el("span", { class: `kind ${x.kind}` }, KIND_LABEL[x.kind] ?? x.kind), " ", h.el("span", { class: "sentence" }, x.text),
        x.run ? [" ", h.el("a", { class: "forked-from", href: `#/run/${encodeURIComponent(x.run)}` }, `open ${x.run} →`)] : "")));
  }, (error) => list.replaceChildren(h.el("li", { class: "error", id: "timeline-error" }, String(error.message ?? error))));
  return section;
}

/** The failed attempts of a step before its latest record, for its payload panel. */
export function attemptsBox(id, stepId, h) {
  const box = h.el("div", { id: "attempts" });
  h.api(`${h.runUrl(id)}/timeline?step=${encodeURIComponent(stepId)}`).then((t) => {
    const failed = t.attempts[stepId] ?? [];
    if (failed.length === 0) return;
    box.replaceChildren(h.el("p", {}, `Earlier attempts that failed (${failed.length}):`),
      h.el("ul", {}, failed.map((a) => h.el("li", { "data-attempt": a.attempt }, `attempt ${a.attempt} at ${a.at}: `, h.el("span", { class: "error" }, a.error)))));
  }, () => undefined);
  return box;
}

/** "fork here" and "rerun from here" for one step row. */
export function travelButtons(id, stepId, h) {
  return [
    h.el("button", { class: "link", "data-fork": stepId, onclick: () => confirmTravel(id, "fork", stepId, h) }, "fork here"), " ",
    h.el("button", { class: "link", "data-rerun": stepId, onclick: () => confirmTravel(id, "rerun", stepId, h) }, "rerun from here"),
  ];
}

function confirmTravel(id, action, stepId, h) {
  const fork = action === "fork";
  const input = h.el("input", { id: "confirm-reason", placeholder: fork ? "new run id (optional)" : "reason (optional)" });
  const result = h.el("p", { id: "confirm-result" });
  const yes = h.el("button", { id: "confirm-yes", class: "danger" }, fork ? "Yes, fork" : "Yes, rerun");
  yes.addEventListener("click", async () => {
    yes.disabled = true;
    const body = fork ? { at: stepId, ...(input.value.trim() ? { id: input.value.trim() } : {}) } : { from: stepId, reason: input.value };
    try {
      const done = await h.api(`${h.runUrl(id)}/actions/${action}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
      h.panel.replaceChildren(h.el("p", { id: "action-done" }, done.text, fork ? [" ", h.el("a", { id: "fork-link", href: `#/run/${encodeURIComponent(done.id)}` }, `open ${done.id} →`)] : ""));
      h.route();
    } catch (error) {
      result.textContent = String(error.message ?? error);
      result.className = "error";
      yes.disabled = false;
    }
  });
  const question = fork
    ? ["Fork run ", h.el("span", { class: "mono" }, id), " at ", h.el("span", { class: "mono" }, stepId), "? A new run reuses the steps before it and runs it and the rest afresh."]
    : ["Rerun run ", h.el("span", { class: "mono" }, id), " from ", h.el("span", { class: "mono" }, stepId), "? It and every later step run again at the run's next resume; nothing is deleted."];
  h.panel.replaceChildren(h.el("div", { class: "confirm", id: "confirm", role: "dialog" },
    h.el("p", {}, question), input, " ", yes, " ", h.el("button", { id: "confirm-no", onclick: () => { h.panel.replaceChildren(); h.route(); } }, "No"), result));
  input.focus();
  h.panel.scrollIntoView({ block: "nearest" });
}
