/**
 * How a pi session reaches a run (durable-runs.ts): the plan store for its cwd, and the run's lock there. Two
 * sessions never drive one run at once: the second is refused with the live holder's name.
 */
import type { WorkflowError } from "@phasekit/core";
import type { PlanStore, StoreLock } from "../store/plan-store.js";
import type { DurableOptions, DurableResult } from "./durable-contract.js";
import { failed } from "./durable-failure.js";
import { PI_TOOL } from "./durable-held.js";

/** Opening a session's store and locking a run in it. */
export interface RunAccess {
  openStore(cwd: string): Promise<DurableResult<{ store: PlanStore }>>;
  lockRun(store: PlanStore, slug: string): Promise<DurableResult<{ lock: StoreLock }>>;
}

/** The access of `options` (its store, else the fs store under its plan root). */
export function createRunAccess(options: DurableOptions): RunAccess {
  // The fs store (the run log, locks) is loaded on first use, not with the extension: pi's start-up does not pay
  // for it, and session_start's claim runs in the background.
  const storeFor = async (cwd: string): Promise<PlanStore> => {
    const given = options.store?.(cwd);
    if (given !== undefined) return given;
    const { createFsPlanStore } = await import("../store/plan-store.js");
    return createFsPlanStore({ repoRoot: cwd, planRoot: typeof options.planRoot === "string" ? options.planRoot : undefined, homeDir: options.homeDir });
  };

  /**
   * Who holds the run, when that holder is alive by the one liveness rule (lock/liveness.ts). A store other than
   * the fs one judges its own leases: its LOCKED is that verdict, and its message names the holder.
   */
  async function liveHolder(store: PlanStore, slug: string, error: WorkflowError): Promise<string | undefined> {
    if (options.store !== undefined) return error.message;
    const [{ judgeLiveness }, { describeHolder }] = await Promise.all([import("../lock/liveness.js"), import("../lock/holder.js")]);
    const seen = await judgeLiveness(await store.runDir(slug)).catch(() => undefined);
    return seen?.verdict === "live" ? describeHolder(seen.holder) : undefined;
  }

  return {
    async openStore(cwd) {
      try {
        return { ok: true, store: await storeFor(cwd) };
      } catch (error) {
        const said = (error as { message?: unknown }).message;
        return { ok: false, kind: "failed", message: `[phasekit] could not open the plan folder: ${typeof said === "string" ? said : String(error)}. Until then the run is kept in this session only.` };
      }
    },
    async lockRun(store, slug) {
      let got;
      try {
        got = await store.lock(slug, { owner: { tool: PI_TOOL } });
      } catch (error) {
        return failed(store, slug, error as WorkflowError);
      }
      if (got.ok) return { ok: true, lock: got.lock };
      if (got.error.code === "LOCKED") {
        const holder = await liveHolder(store, slug, got.error);
        if (holder !== undefined) return { ok: false, kind: "elsewhere", message: `[phasekit] run ${slug} is being driven elsewhere, by ${holder}.` };
      }
      return failed(store, slug, got.error);
    },
  };
}
