/**
 * A pause withdrawn while the holder takes it, on every store: the withdrawal and the holder's take never both
 * succeed. The withdrawal is made to land at the exact moment (no timing): right after the holder's runner read
 * the pause and before it acted on it, or right after it took it.
 */
import { expect, it } from "vitest";
import { createReporter, runWorkflow } from "../../src/index.js";
import type { ControlRequest } from "../../src/store/control-signals.js";
import type { PlanStore, StoreLock } from "../../src/store/plan-store.js";

/** A store and a second store object over the same runs (another process), plus a repo root for runWorkflow. */
export interface WithdrawRaceSetup {
  store: PlanStore;
  other: PlanStore;
  repoRoot: string;
}

export interface Hooks {
  /** After the holder read a pending pause, before it gets the answer. */
  afterRead?(request: ControlRequest): Promise<void>;
  /** After the holder's clear of a pause returned. */
  afterClear?(request: ControlRequest): Promise<void>;
}

/** `inner` with the hooks around the control reads and clears of the holder (its lease's store included). */
export function hooked(inner: PlanStore, hooks: Hooks): PlanStore {
  const wrap = (s: PlanStore): PlanStore =>
    Object.create(s, {
      readControl: {
        value: async (slug: string, signal?: ControlRequest["signal"]) => {
          const r = await s.readControl(slug, signal);
          if (r.ok && r.request?.signal === "pause") await hooks.afterRead?.(r.request);
          return r;
        },
      },
      clearControl: {
        value: async (slug: string, request: ControlRequest) => {
          const r = await s.clearControl(slug, request);
          if (request.signal === "pause") await hooks.afterClear?.(request);
          return r;
        },
      },
      lock: {
        value: async (...args: Parameters<PlanStore["lock"]>) => {
          const got = await s.lock(...args);
          if (!got.ok) return got;
          return { ok: true, lock: Object.create(got.lock, { store: { value: wrap(got.lock.store ?? s) } }) };
        },
      },
    }) as PlanStore;
  return wrap(inner);
}

const quiet = () => createReporter({ onChange: () => undefined });

/** Runs two steps; a pause is filed by `other` during the first. */
async function runWithPause(setup: WithdrawRaceSetup, slug: string, hooks: Hooks) {
  const ran: string[] = [];
  const result = await runWorkflow({ repoRoot: setup.repoRoot, target: slug, toolName: "t", store: hooked(setup.store, hooks), createReporter: quiet }, async (ctx) => {
    await ctx.step("a", null, async () => {
      const filed = await setup.other.requestControl(slug, "pause", { reason: "hold on" });
      if (!filed.ok) throw filed.error;
      ran.push("a");
    });
    await ctx.step("b", null, () => void ran.push("b"));
    return "done";
  });
  return { result, ran };
}

/** A setup that can also take a run's lock from its holder the way a stall does (as holders-contract.ts's loseLock). */
export interface DisplacedSetup extends WithdrawRaceSetup {
  loseLock(slug: string): Promise<void>;
}

const MOMENTS = ["between its read of a pause and its take", "right after it took a pause"] as const;
/** When the holder loses its lock, in `displacedTakeCases`. */
export type Moment = (typeof MOMENTS)[number];

/**
 * A holder displaced while it takes a pause (the fs and memory stores clear without a fence; PostgreSQL fences
 * the clear itself): the pause stays pending for the run's new holder, and the displaced one ends LOCK_LOST.
 */
export function displacedTakeCases(make: () => Promise<DisplacedSetup>, moments: readonly Moment[] = MOMENTS): void {
  for (const moment of moments) {
    it(`a holder displaced ${moment}: the pause stays pending for the run's new holder`, async () => {
      const setup = await make();
      const slug = moment.startsWith("between") ? "displaced-before" : "displaced-after";
      let newHolder: StoreLock | undefined;
      const displace = async (): Promise<void> => {
        if (newHolder !== undefined) return;
        await setup.loseLock(slug);
        const got = await setup.other.lock(slug, { owner: { tool: "b" } });
        if (!got.ok) throw got.error;
        newHolder = got.lock;
      };
      const hooks: Hooks = moment.startsWith("between") ? { afterRead: displace } : { afterClear: displace };
      await expect(runWithPause(setup, slug, hooks)).rejects.toMatchObject({ code: "LOCK_LOST" });
      expect(newHolder).toBeDefined();
      expect(await setup.other.readControl(slug, "pause")).toMatchObject({ ok: true, request: { signal: "pause", reason: "hold on" } });
      await newHolder?.release();
    });
  }
}

/** Registers the cases; `make` gives a fresh setup per case. */
export function withdrawRaceCases(make: () => Promise<WithdrawRaceSetup>): void {
  it("a pause withdrawn after the holder read it and before it acted on it: the withdrawal is acknowledged and the run does not pause", async () => {
    const setup = await make();
    const withdrawals: unknown[] = [];
    const { result, ran } = await runWithPause(setup, "withdrawn", {
      afterRead: async (request) => {
        if (withdrawals.length === 0) withdrawals.push(await setup.other.withdrawControl("withdrawn", request));
      },
    });
    expect(withdrawals).toEqual([{ ok: true, withdrawn: true }]);
    expect(result.status).toBe("completed");
    expect(ran).toEqual(["a", "b"]);
    expect(await setup.other.readControl("withdrawn")).toEqual({ ok: true, request: null });
  });

  it("a pause the holder has taken: the withdrawal is told withdrawn: false and the run pauses", async () => {
    const setup = await make();
    const withdrawals: unknown[] = [];
    const { result, ran } = await runWithPause(setup, "taken", {
      afterClear: async (request) => {
        if (withdrawals.length === 0) withdrawals.push(await setup.other.withdrawControl("taken", request));
      },
    });
    expect(withdrawals).toEqual([{ ok: true, withdrawn: false }]);
    expect(result.status).toBe("paused");
    expect(ran).toEqual(["a"]);
  });
}
