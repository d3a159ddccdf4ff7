/**
 * `forkRun` on a store named by URL (PostgreSQL): the same fork (fork-parts.ts) through the PlanStore port only.
 * The source is read without a lease (its records, and each output through `readStepOutput`); the fork is
 * written under its own lease, its steps first and its metadata last: a process killed mid-fork leaves a run
 * with no metadata (listed, never resumed by anyone who was not told its id), never one whose metadata claims a
 * history it does not hold. The steps are the store's `records()`, in the order the run first recorded them.
 */
import type { JsonValue } from "../io/plain-json.js";
import { validateSlug } from "../io/plan-paths.js";
import type { StepRecord } from "../engine/records.js";
import type { PlanStore } from "../store/plan-store-port.js";
import { FORKED_EVENT, forkError, forkMetadata, ForkState, stepsBefore, taken, unreadableOutput, type ForkRunOptions, type ForkRunResult } from "./fork-parts.js";
import { generateRunId } from "./id.js";

/** Forks run `options.target` of `store` at `options.at` (see the module comment). */
export async function forkInStore(store: PlanStore, options: ForkRunOptions, now: () => Date): Promise<ForkRunResult> {
  const source = options.target;
  const read = await store.readMetadata(source);
  if (!read.ok) throw read.error;
  if (read.metadata === null) throw forkError("NOT_FOUND", `no run "${source}" to fork in ${store.planRoot}.`, { value: source, hint: "list the runs with `phasekit list --store …`" });
  const readOutput = store.readStepOutput?.bind(store);
  if (readOutput === undefined) {
    throw forkError("UNSUPPORTED", `the store at ${store.planRoot} cannot read stored outputs back, so it cannot fork run ${source}.`, { value: source, hint: "fork on a store that implements readStepOutput (the file store, PostgreSQL)" });
  }
  const records = await (await store.checkpoints(source, { now })).records();
  const ordered = records.map((record) => ({ key: record.stepId, status: record.status, superseded: record.superseded, record }));
  const copied = stepsBefore(ordered, options.at, source);
  const slug = await newSlug(store, options.id);
  const locked = await store.lock(slug, { owner: { tool: options.tool ?? "phasekit fork" }, retries: 0 });
  if (!locked.ok) throw locked.error;
  try {
    const held = locked.lock.store ?? store;
    const into = await held.checkpoints(slug, { now });
    // Checked again under the fork's lease: a run of this id made since the check (another process, the same id)
    // is never written into.
    const again = await held.readMetadata(slug);
    if (!again.ok) throw again.error;
    if (again.metadata !== null || (await into.records()).length > 0) throw taken(slug);
    const state = new ForkState();
    for (const e of copied) {
      const out = await readOutput(source, e.record as StepRecord);
      if (!out.ok) throw unreadableOutput(e.key, source);
      const output = JSON.parse(out.text) as JsonValue;
      await into.step(e.key, null, () => output, { inputFingerprint: e.record.inputFingerprint });
      state.note(e.key, output);
      await options.onCopied?.(e.key);
    }
    const at = now().toISOString();
    const written = await held.writeMetadata(slug, forkMetadata(read.metadata, slug, state.value, options.tool ?? "phasekit fork", at), null);
    if (!written.ok) throw written.error;
    // For people: the metadata is the fact; a journal line that cannot be written loses nothing.
    await held.appendJournal(slug, { generation: written.metadata.generation, at, event: FORKED_EVENT, data: { from: source, at: options.at, steps: copied.length } });
  } finally {
    await locked.lock.release();
  }
  return { slug, runDir: await store.runDir(slug), from: { slug: source, at: options.at }, copied: copied.map((e) => e.key) };
}

async function newSlug(store: PlanStore, id: string | undefined): Promise<string> {
  const exists = async (slug: string): Promise<boolean> => {
    const r = await store.readMetadata(slug);
    return !r.ok || r.metadata !== null || (await store.list()).some((e) => e.slug === slug);
  };
  if (id === undefined) {
    if (store.reserveRun === undefined) return generateRunId(exists);
    const r = await store.reserveRun();
    if (!r.ok) throw r.error;
    return r.slug;
  }
  const v = validateSlug(id);
  if (!v.ok) throw v.error;
  if (await exists(v.slug)) throw taken(v.slug);
  return v.slug;
}
