/**
 * Runs that outlive their session: each run's state is also written to its plan folder (`<planRoot>/<taskId>/
 * workflow.json`, compare-and-set, journaled) while the session holds the run's lock. `/workflow-resume <id>`
 * in another session reads it back under the lock, so two sessions never drive one run at once: the second is
 * refused with the holder's name (durable-access.ts). What it offers: durable-contract.ts; the held run's
 * control requests: durable-control.ts; one operation at a time: durable-serial.ts.
 */
import type { WorkflowError } from "@phasekit/core";
import { controlAfter, controlForRun } from "../run/control-requests.js";
import type { PlanStore } from "../store/plan-store.js";
import { isLive, type WorkflowState } from "./core-bridge.js";
import { createRunAccess } from "./durable-access.js";
import { loadBudgetTotal, saveBudgetTotal } from "./durable-budget.js";
import type { DurableOptions, DurableRuns } from "./durable-contract.js";
import { heldRunControls } from "./durable-control.js";
import { failed } from "./durable-failure.js";
import { writeHeld, type Held } from "./durable-held.js";
import { loadPinFrom, savePinIn } from "./durable-pin.js";
import { serialized } from "./durable-serial.js";

/**
 * The held run's requests as runWorkflow's runner sees them (run/control-requests.ts `controlForRun`), from the
 * metadata read under the lock: what the run's last end made moot is cleared now, and a late one is never
 * honoured. A clearing the store fails leaves the view alone: it clears each superseded request when it meets it.
 */
async function controlFor(store: PlanStore, slug: string, taken: { status: string; generation: number } | null): Promise<PlanStore> {
  const ended = taken === null ? null : { status: taken.status, generation: taken.generation };
  return controlForRun(store, slug, ended).catch(() => controlAfter(store, ended));
}

/** Creates the durable side; `planRoot: false` turns it off (session entries only). */
export function createDurableRuns(options: DurableOptions, readState: (raw: unknown) => { ok: true; state: WorkflowState } | { ok: false; error: { message: string } }): DurableRuns {
  let held: Held | undefined;
  const enabled = options.planRoot !== false;
  const access = createRunAccess(options);

  const inner: DurableRuns = {
    enabled,
    heldSlug: () => held?.slug,
    async claim(cwd, state, now) {
      if (!enabled) return { ok: true };
      if (held?.slug === state.taskId) return inner.write(state, now);
      await inner.release();
      const opened = await access.openStore(cwd);
      if (!opened.ok) return opened;
      const store = opened.store;
      const locked = await access.lockRun(store, state.taskId);
      if (!locked.ok) return locked;
      const meta = await store.readMetadata(state.taskId);
      const generation = meta.ok && meta.metadata !== null ? meta.metadata.generation : null;
      const createdAt = meta.ok && meta.metadata !== null ? meta.metadata.createdAt : new Date(state.startedAt).toISOString();
      // Writes go through the lease (lock.store): fencing belongs to this acquisition, not to the store object.
      const leased = locked.lock.store ?? store;
      const control = await controlFor(leased, state.taskId, meta.ok ? meta.metadata : null);
      held = { store: leased, control, slug: state.taskId, lock: locked.lock, generation, createdAt, budget: await loadBudgetTotal(leased, state.taskId, now) };
      return inner.write(state, now);
    },
    async write(state, now) {
      const h = held;
      if (!enabled || h === undefined || h.slug !== state.taskId) return { ok: true };
      const r = await writeHeld(h, state, now);
      // Keep the lock until the end is also notified, so that flag reaches the plan folder too.
      if (!isLive(state) && state.completionNotified) await inner.release();
      return r;
    },
    async resume(cwd, id) {
      if (!enabled) return { ok: false, kind: "failed", message: "[phasekit] plan folders are turned off (planRoot: false); nothing to resume from." };
      if (held?.slug === id) return { ok: false, kind: "failed", message: `[phasekit] run ${id} is already driven by this session.` };
      // A session that only shows this run (another one held it at start) may take it over now.
      const opened = await access.openStore(cwd);
      if (!opened.ok) return opened;
      const store = opened.store;
      let meta;
      try {
        meta = await store.readMetadata(id);
      } catch (error) {
        return failed(store, id, error as WorkflowError, "could not read");
      }
      if (!meta.ok) return failed(store, id, meta.error, "could not read");
      if (meta.metadata === null || meta.metadata.state === undefined) return { ok: false, kind: "failed", message: `[phasekit] no workflow run ${id} in ${store.planRoot}.` };
      const st = readState(meta.metadata.state);
      if (!st.ok) return { ok: false, kind: "failed", message: `[phasekit] run ${id} has an unreadable state: ${st.error.message}` };
      if (!isLive(st.state)) return { ok: false, kind: "failed", message: `[phasekit] run ${id} has already ended (${st.state.status}).` };
      await inner.release();
      const locked = await access.lockRun(store, id);
      if (!locked.ok) return locked;
      // Read again under the lock: the holder we waited for may have moved the run on.
      const again = await store.readMetadata(id);
      const fresh = again.ok && again.metadata?.state !== undefined ? readState(again.metadata.state) : st;
      const state = fresh.ok ? fresh.state : st.state;
      const leased = locked.lock.store ?? store;
      const budget = await loadBudgetTotal(leased, id, Date.now());
      const taken = again.ok && again.metadata !== null ? again.metadata : meta.metadata;
      const control = await controlFor(leased, id, taken);
      held = { store: leased, control, slug: id, lock: locked.lock, generation: taken.generation, createdAt: meta.metadata.createdAt, budget };
      return { ok: true, state };
    },
    ...heldRunControls(() => held, access, enabled),
    budget: (taskId) => (held?.slug === taskId ? { hold: held, recorded: held.budget } : undefined),
    async recordBudget(taskId, used, now, counts) {
      const h = held;
      if (h !== undefined && h.slug === taskId) h.budget = await saveBudgetTotal(h.store, h.slug, h.budget, used, now, counts);
    },
    async savePin(state, data, now) {
      const h = held;
      if (!enabled || h === undefined || h.slug !== state.taskId) return { ok: true };
      const r = await savePinIn(h.store, h.slug, state, data, now);
      return r.ok ? r : failed(h.store, h.slug, r.error as WorkflowError, "could not record the pinned definitions in");
    },
    async loadPin(state, now) {
      const h = held;
      return h === undefined || h.slug !== state.taskId ? undefined : loadPinFrom(h.store, h.slug, state, now);
    },
    async release() {
      const h = held;
      held = undefined;
      if (h === undefined) return;
      await h.lock.release().catch(() => undefined);
      await h.store.close().catch(() => undefined);
    },
  };
  return serialized(inner);
}
