/**
 * What the inspector's API answers, over the same run views and actions as the CLI: a run's page (steps with
 * reuse verdicts, diagram, journal; each part on its own, so a damaged journal leaves the rest readable), a
 * step's payload paged, and the control actions.
 */
import { migrateState } from "@phasekit/core";
import { loadDefinitionFolders } from "../definitions/folders.js";
import { controlRun, type ControlAction } from "./control-actions.js";
import { buildDiagram, toMermaid } from "./diagram.js";
import { approveGateOf } from "./inspector-gate.js";
import { budgetLine, budgetSpentIn, budgetView, type BudgetSpent } from "./budget-view.js";
import { stepPayload, withRunHistory } from "./history-view.js";
import { holderLive, locateRun, runDetail, type Roots } from "./run-view.js";
import { stepVerdict } from "./step-verdict.js";
import { storeAt } from "./store-runs.js";
import { journalPage, type JournalSince } from "./journal-page.js";
import { plainMessage, toFailure } from "./io.js";

/** What the API needs to know of the launch. */
export interface ApiContext {
  roots: Roots;
  defDirs: readonly string[];
  now: () => Date;
}

/** A part of the page that could not be read: its typed error, shown in place of the part. */
export type PartError = { code: string; message: string };

/** Steps a run page holds at most (the rest are paged: a 10,000-step run's first screen stays small). */
export const STEPS_PAGE = 200;

/** Which steps a page shows: from `offset` (default: the last page, where a live run's newest steps are). */
export interface StepWindow {
  offset?: number;
  limit?: number;
}

/**
 * The run page: the run, a page of its steps with reuse verdicts, its diagram and its journal (with `since`, a
 * live page's refresh: only the entries past those it holds, `journalAfter` saying so).
 */
export async function runPage(o: ApiContext, id: string, window: StepWindow = {}, since?: JournalSince): Promise<object> {
  const detail = await runDetail(o.roots, id, o.now().getTime());
  const location = await locateRun(o.roots, o.roots.store === undefined ? detail.summary.runDir : detail.summary.id);
  const live = await holderLive(o.roots, location);
  const total = detail.steps.length;
  const limit = Math.min(Math.max(1, window.limit ?? STEPS_PAGE), STEPS_PAGE);
  const offset = Math.min(window.offset ?? Math.max(0, total - limit), Math.max(0, total - 1));
  const shown = detail.steps.slice(offset, offset + limit);
  // Verdicts read stored outputs: only for the steps shown, all from one opening of the history.
  // What the run spent is read from the same opening of a plan folder's history (a third opening cost a
  // 10,000-step page ~60 ms); undefined: read it on its own below.
  let spent: BudgetSpent | null | undefined;
  const steps = await part(() =>
    withRunHistory(o.roots, location, async (h) => {
      const byId = new Map(h.records.map((r) => [r.stepId, r]));
      const out = [];
      for (const s of shown) out.push({ ...s, verdict: await stepVerdict(byId.get(s.stepId) ?? null, null, { live, checkOutput: h.checkOutput }) });
      if (h.log !== undefined) spent = await budgetSpentIn(h.log).catch(() => undefined);
      return out;
    }),
  );
  const journal = await part(async () => journalPage(o.roots, location, since));
  const budget = await part(async () => budgetView(spent !== undefined ? { spent } : o.roots.store === undefined ? detail.summary.runDir : { store: await storeAt(o.roots.store, o.roots.repoRoot), slug: detail.summary.id }, detail.metadata?.createdAt, detail.metadata?.state, o.defDirs.length === 0 ? null : loadDefinitionFolders(o.defDirs).registry, o.now().getTime()));
  return {
    schema: "phasekit.inspector-run/2",
    summary: detail.summary,
    metadata: detail.metadata,
    pending: detail.pending,
    steps: steps.ok ? steps.value : shown,
    stepsPage: { offset, limit, total },
    stepsError: detail.stepsError ?? (steps.ok ? null : steps.error),
    diagram: diagramOf(o, detail.metadata?.state),
    /** The current phase's approve gate (name, prompt, payload schema) when the definitions place the run. */
    approveGate: approveGateOf(o.defDirs.length === 0 ? null : loadDefinitionFolders(o.defDirs).registry, detail.metadata?.state),
    budget: budget.ok && budget.value !== null ? { ...budget.value, text: budgetLine(budget.value) } : null,
    journal: journal.ok ? journal.value : [],
    journalAfter: since?.after ?? 0,
    journalError: journal.ok ? null : journal.error,
  };
}

function diagramOf(o: ApiContext, raw: unknown): object | null {
  if (raw === undefined || o.defDirs.length === 0) return null;
  const state = migrateState(raw);
  if (!state.ok) return null;
  const d = buildDiagram(loadDefinitionFolders(o.defDirs).registry, state.state.workflowKey, state.state);
  return d === null ? null : { ...d, mermaid: toMermaid(d) };
}

/** Default and largest slice of a step's output one request returns (characters of its pretty JSON). */
export const PAYLOAD_PAGE = 64 * 1024;

/** A step's input fingerprint and a slice of its pretty-printed output; null when the run has no such step. */
export async function payloadPage(o: ApiContext, id: string, stepId: string, offset: number, limit: number): Promise<object | null> {
  const location = await locateRun(o.roots, id);
  const p = await stepPayload(o.roots, location, stepId);
  if (p === null) return null;
  if (!p.output.ok) return { schema: "phasekit.step-payload/1", id: location.slug, ...p };
  const text = p.output.json;
  const size = Math.min(Math.max(1, limit), PAYLOAD_PAGE);
  const slice = text.slice(offset, offset + size);
  const next = offset + slice.length;
  return {
    schema: "phasekit.step-payload/1",
    id: location.slug,
    stepId,
    record: p.record,
    input: p.input,
    output: { ok: true, bytes: p.output.bytes, totalChars: text.length, offset, text: slice, nextOffset: next < text.length ? next : null },
  };
}

/** Runs a control action for the page (the CLI's own implementation). */
export async function act(o: ApiContext, id: string, action: ControlAction, reason: string | undefined): Promise<object> {
  const outcome = await controlRun(o.roots, id, action, reason ?? `${action} from the inspector`, o.now());
  return { schema: "phasekit.control/1", ...outcome.body, text: outcome.text };
}

async function part<T>(read: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: PartError }> {
  try {
    return { ok: true, value: await read() };
  } catch (error) {
    const f = toFailure(error);
    return { ok: false, error: { code: f.error.code, message: plainMessage(f.error.message) } };
  }
}
