/**
 * A holder that took a pause and then found its lock lost files the pause again for the run's next holder
 * (run/control-requests.ts `takeRequest`). When the store refuses that filing, the pause must not vanish without a
 * word: the error the displaced holder ends with names the request and why it could not be handed on.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { workflowError } from "@phasekit/core";
import { createReporter, runWorkflow } from "../src/index.js";
import { takeRequest } from "../src/run/control-requests.js";
import type { PlanStore } from "../src/store/plan-store.js";
import { hooked } from "./contract/withdraw-race-cases.js";
import { createMemoryPlanStore } from "./helpers/memory-plan-store.js";
import { sampleMetadata } from "./helpers/metadata-fixtures.js";

const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempRoot = (): string => {
  const d = mkdtempSync(path.join(tmpdir(), "pk-handoff-"));
  dirs.push(d);
  return d;
};

/** A held run with a pending pause, and a way to displace its holder right after the holder's take. */
async function heldWithPause() {
  const store = createMemoryPlanStore();
  const other = store.reopen();
  await store.writeMetadata("r", sampleMetadata("r"), null);
  const held = await store.lock("r", { owner: { tool: "a" } });
  if (!held.ok) throw held.error;
  const filed = await other.requestControl("r", "pause", { reason: "hold on" });
  if (!filed.ok) throw filed.error;
  const displace = async (): Promise<void> => {
    store.expireLock("r");
    const b = await other.lock("r", { owner: { tool: "b" } });
    if (!b.ok) throw b.error;
  };
  return { store, held: held.lock, request: filed.request, displace };
}

/** `inner` whose clear displaces the holder once it returned, and whose `requestControl` is `refile`. */
function refusingAfterTake(inner: PlanStore, displace: () => Promise<void>, refile: PlanStore["requestControl"]): PlanStore {
  return Object.create(inner, {
    clearControl: { value: async (...args: Parameters<PlanStore["clearControl"]>) => (await inner.clearControl(...args).finally(displace)) },
    requestControl: { value: refile },
  }) as PlanStore;
}

describe("a displaced holder's pause that the store will not take back", () => {
  it("a refusal ({ ok: false }) is named in the error the holder ends with: the request, and the store's reason", async () => {
    const { held, request, displace } = await heldWithPause();
    const refusal = workflowError("store", "WRITE_FAILED", "run r: the disk is full", { hint: "free some space" });
    const store = refusingAfterTake(held.store as PlanStore, displace, async () => ({ ok: false, error: refusal }));
    const error = await takeRequest(store, "r", request, held).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: "LOCK_LOST", details: { request, handOff: { code: "WRITE_FAILED" } } });
    const message = (error as Error).message;
    expect(message).toContain(`pause request ("hold on", filed ${request.requestedAt}`);
    expect(message).toContain("could not be handed on to the run's next holder");
    expect(message).toContain("the disk is full");
    // The lock's own words stay: the holder was displaced, and that is why it lets go.
    expect(message).toContain("is lost");
  });

  it("a store that throws instead of refusing is named the same way", async () => {
    const { held, request, displace } = await heldWithPause();
    const store = refusingAfterTake(held.store as PlanStore, displace, async () => {
      throw new Error("connection reset");
    });
    await expect(takeRequest(store, "r", request, held)).rejects.toMatchObject({
      code: "LOCK_LOST",
      message: expect.stringContaining("could not be handed on to the run's next holder (connection reset)"),
      details: { request, handOff: { message: "connection reset" } },
    });
  });

  it("runWorkflow: the new holder ended before the pause could be filed again (NOT_RUNNING): the run's error says so", async () => {
    const store = createMemoryPlanStore();
    const other = store.reopen();
    let displaced = false;
    const hooks = {
      afterClear: async () => {
        if (displaced) return;
        displaced = true;
        // The run is taken by another process, which ends at once: nobody holds it when the pause is filed again.
        store.expireLock("r");
        const b = await other.lock("r", { owner: { tool: "b" } });
        if (!b.ok) throw b.error;
        await b.lock.release();
      },
    };
    const ran: string[] = [];
    const run = runWorkflow({ repoRoot: tempRoot(), target: "r", toolName: "t", store: hooked(store, hooks), createReporter: () => createReporter({ onChange: () => undefined }) }, async (ctx) => {
      await ctx.step("a", null, async () => {
        const filed = await other.requestControl("r", "pause", { reason: "lunch break" });
        if (!filed.ok) throw filed.error;
        ran.push("a");
      });
      await ctx.step("b", null, () => void ran.push("b"));
    });
    await expect(run).rejects.toMatchObject({
      code: "LOCK_LOST",
      message: expect.stringMatching(/pause request \("lunch break".*could not be handed on to the run's next holder.*NOT_RUNNING/),
      details: { request: { signal: "pause", reason: "lunch break" }, handOff: { code: "NOT_RUNNING" } },
    });
    expect(ran).toEqual(["a"]);
    expect(await other.readControl("r", "pause")).toEqual({ ok: true, request: null });
  });
});
