/**
 * The CLI's window onto runs kept in a store named by URL (`--store postgres://…`, `PHASEKIT_STORE`): the same
 * views run-view.ts gives of a plan folder (summaries, a run's detail, its journal, its step history), read
 * through the PlanStore port only. The store is opened once per process and closed when the command ends
 * (`closeStores`), so a CLI run never waits on an idle pool. Liveness is the store's own: its lease, judged by
 * the store (PostgreSQL: by the database's clock), not the lock folder's rule.
 */
import { workflowError } from "@phasekit/core";
import { validateSlug } from "../io/plan-paths.js";
import { usage } from "./io.js";
import type { StepRecord } from "../engine/records.js";
import type { PlanRunEntry, PlanStore, StoreLeaseView, StoreRunFacts } from "../store/plan-store-port.js";
import { stepFacts, type StoredOutputCheck } from "../store/run-steps.js";
import { isReservedStepKey } from "../engine/reserved-keys.js";
import { openStoreUrl, type StoreUrl } from "../store/store-url.js";
import type { RunLocation } from "../run/target.js";

const open = new Map<string, Promise<PlanStore>>();

/** The store `url` names, opened once per process (its typed open error is thrown, and the next call tries again). */
export function storeAt(url: StoreUrl, cwd?: string): Promise<PlanStore> {
  let s = open.get(url.connectionString + "\0" + url.namespace);
  if (s === undefined) {
    s = openStoreUrl(url, cwd === undefined ? {} : { cwd });
    open.set(url.connectionString + "\0" + url.namespace, s);
    s.catch(() => open.delete(url.connectionString + "\0" + url.namespace));
  }
  return s;
}

/** Closes every store the CLI opened (the end of a command, the inspector's shutdown). */
export async function closeStores(): Promise<void> {
  const all = [...open.values()];
  open.clear();
  for (const s of all) await (await s.catch(() => null))?.close();
}

/** A store run's location: its slug, and its label (`postgres:<namespace>/<slug>`) where a plan folder has a path. */
export async function locateStoreRun(store: PlanStore, target: string): Promise<RunLocation> {
  const v = validateSlug(target);
  if (!v.ok) {
    throw workflowError("cli", "INVALID_SLUG", `${JSON.stringify(target)} is not a run id of ${store.planRoot}: ${v.error.message}`, {
      value: target,
      hint: "with --store, name a run by its id (`phasekit list --store …` shows them), not by a path",
    });
  }
  const read = await store.readMetadata(v.slug);
  // A reserved run with no metadata yet exists too: it is in the store's list.
  const exists = !read.ok || read.metadata !== null || (await store.list()).some((e) => e.slug === v.slug);
  if (!exists) {
    throw workflowError("cli", "NOT_FOUND", `no run ${JSON.stringify(target)} in ${store.planRoot}.`, {
      value: target,
      hint: "`phasekit list --store …` shows the runs; a namespace other than `default` is given as ?namespace=NAME in the URL",
    });
  }
  return { planRoot: store.planRoot, slug: v.slug, runDir: await store.runDir(v.slug) };
}

/** Who holds the run now, as the store judges it; null when nobody does (or the store cannot say). */
export async function storeLease(store: PlanStore, slug: string): Promise<StoreLeaseView | null> {
  return store.readLease === undefined ? null : store.readLease(slug);
}

/** A run as `phasekit list` needs it; `steps` is null when its records could not be read. */
export type ListedRun = StoreRunFacts | (PlanRunEntry & { lease: StoreLeaseView | null; steps: null });

/**
 * Every run with its lease and step facts: the store's one read (`listRunFacts`), or for a store without it two
 * reads per run (its lease, every step record); a run whose lease or records cannot be read is listed without.
 */
export async function storeRunFacts(store: PlanStore): Promise<ListedRun[]> {
  if (store.listRunFacts !== undefined) return store.listRunFacts();
  const out: ListedRun[] = [];
  for (const entry of await store.list()) {
    const lease = await storeLease(store, entry.slug).catch(() => null);
    const steps = await storeStepRecords(store, entry.slug).then(stepFacts, () => null);
    out.push(steps === null ? { ...entry, lease, steps } : { ...entry, lease, steps });
  }
  return out;
}

/**
 * The latest record of every step of the body, read without a lease: phasekit's own entries (`phasekit:…`) are
 * left out, as the plan folder's readers leave them out (readRunSteps).
 */
export async function storeStepRecords(store: PlanStore, slug: string): Promise<StepRecord[]> {
  return (await storeHistoryRecords(store, slug)).filter((r) => !isReservedStepKey(r.stepId));
}

/** The latest record of every entry of the run's history, phasekit's own included (the definitions pin), read without a lease. */
export async function storeHistoryRecords(store: PlanStore, slug: string): Promise<StepRecord[]> {
  return (await store.checkpoints(slug, { now: () => new Date() })).records();
}

/** A completed step's stored output, checked; "missing" when the store cannot read outputs back. */
export async function storeStepOutput(store: PlanStore, slug: string, record: StepRecord): Promise<StoredOutputCheck> {
  if (store.readStepOutput === undefined) return { ok: false, reason: "missing", message: `${store.planRoot} cannot read stored outputs back` };
  return store.readStepOutput(slug, record);
}

/** A command that works on plan folders only, asked with `--store`: bad usage, saying what to do instead. */
export function notOnStore(command: string, instead: string): never {
  return usage(`phasekit ${command} works on plan folders only, not with --store.`, { field: "store", value: command, hint: instead });
}
