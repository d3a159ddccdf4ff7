/**
 * What the inspector's API answers, over the same run views and actions as the CLI: a run's page (steps with
 * reuse verdicts, diagram, journal; each part on its own, so a damaged journal leaves the rest readable), a
 * step's payload paged, and the control actions.
 */
import { migrateState, type WorkflowRegistry } from "@phasekit/core";
import { loadDefinitionFolders } from "../definitions/folders.js";
import { controlRun, offeredActions, type ControlAction } from "./control-actions.js";
import { buildDiagram, toMermaid } from "./diagram.js";
import { approveGateOf } from "./inspector-gate.js";
import { budgetLine, budgetSpentIn, budgetView } from "./budget-view.js";
import { stepPayload } from "./history-view.js";
import { pageOfSteps, type StepWindow } from "./inspector-steps.js";
import { locateRun, withRunRead, type Roots } from "./run-view.js";
import { viewStep } from "./run-summary.js";
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

/**
 * The run page: the run, a page of its steps with reuse verdicts, its diagram and its journal (`since`: only the
 * entries past those the page holds), all from one reading of the run.
 */
export async function runPage(o: ApiContext, id: string, window: StepWindow = {}, since?: JournalSince): Promise<object> {
  return withRunRead(o.roots, id, o.now().getTime(), async (r) => {
    const { shown, page } = pageOfSteps(r.steps, window);
    // Verdicts read stored outputs: only for the steps shown.
    const steps = await part(async () => {
      const out = [];
      for (const s of shown) out.push({ ...viewStep(s, r.live), verdict: await stepVerdict(s, null, { live: r.live, checkOutput: r.checkOutput }) });
      return out;
    });
    const journal = await part(() => journalPage(o.roots, r.location, since, r.journal));
    // What the run spent: from the same opening of a plan folder's history; through its store otherwise.
    const spent = r.log !== undefined ? await budgetSpentIn(r.log).catch(() => null) : undefined;
    const registry = o.defDirs.length === 0 ? null : loadDefinitionFolders(o.defDirs).registry;
    const store = spent === undefined && o.roots.store !== undefined ? await storeAt(o.roots.store, o.roots.repoRoot) : undefined;
    const budget = await part(async () => budgetView(store === undefined ? { spent: spent ?? null } : { store, slug: r.summary.id }, r.metadata?.createdAt, r.metadata?.state, registry, o.now().getTime()));
    return {
      schema: "phasekit.inspector-run/2",
      summary: r.summary,
      metadata: r.metadata,
      pending: r.pending,
      /** The control actions worth offering now (the server checks again when one is asked for). */
      actions: offeredActions(r.summary.status, r.pending),
      steps: steps.ok ? steps.value : shown.map((s) => viewStep(s, r.live)),
      stepsPage: page,
      stepsError: r.stepsError ?? (steps.ok ? null : steps.error),
      diagram: diagramOf(registry, r.metadata?.state),
      /** The current phase's approve gate (name, prompt, payload schema) when the definitions place the run. */
      approveGate: approveGateOf(registry, r.metadata?.state),
      budget: budget.ok && budget.value !== null ? { ...budget.value, text: budgetLine(budget.value) } : null,
      journal: journal.ok ? journal.value : [],
      /** The journal holds only the entries past this seq (0: all of it). */
      journalAfter: since?.after ?? 0,
      journalError: journal.ok ? null : journal.error,
    };
  });
}

function diagramOf(registry: WorkflowRegistry | null, raw: unknown): object | null {
  if (raw === undefined || registry === null) return null;
  const state = migrateState(raw);
  if (!state.ok) return null;
  const d = buildDiagram(registry, state.state.workflowKey, state.state);
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
